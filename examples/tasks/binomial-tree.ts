/**
 * Counting the nodes of a UTS binomial tree (Unbalanced Tree Search, Olivier et al. 2006): the root has
 * b0 children; every other node has m children with probability q, else none. With q·m just below 1 each
 * non-root subtree has 1 / (1 − q·m) nodes on average (1000 for T3) but most die at once and a few run
 * thousands of levels deep: the tree is deep, narrow and impossible to partition in advance — the work
 * must be found and moved while it runs. Node shapes come from a SHA-1 splittable stream (uts-rng.ts), so
 * the count for given parameters is fixed however the tree is split.
 *
 * A task holds a range of the root's children still to visit and a stack of unexpanded nodes (five words
 * each, in an Int32Array: it travels by memcpy when split off or checkpointed, where a number[] of T3's
 * ~10,000 words was packed number by number each time), and visits depth-first. Its state is checkpointed in the ledger with every split, so it must stay
 * small: the root's b0 children are a range, never a stack of b0 nodes. `split` gives away the upper half
 * of that range while there is one (a few numbers, however many nodes), then the bottom half of the stack —
 * the nodes nearest the root, whose subtrees are the largest on average — so a thief gets as much work as
 * one hand-over can carry. In the deep, narrow parts the stack often holds a single node; `split` then
 * expands nodes itself until there are two to share (or none left), because a split request answered with
 * `undefined` is used up: the worker that asked would wait for this task's end.
 */
import { defineTask } from '../../src/index.js';
import { nodeDraw, writeChildState, writeRootState } from './uts-rng.js';

/** The tree's shape: the job's input, shared by every task. */
export interface TreeShape {
  /** Children of the root. */
  b0: number;
  /** Probability that a non-root node has children (q·m < 1 keeps the tree finite). */
  q: number;
  /** Children of a non-root node that has any. */
  m: number;
  /** The root's random seed. */
  seed: number;
}

/**
 * Named trees, counted sequentially. `t3` is UTS's T3: 4,112,897 nodes, 3,599,034 leaves, as published with
 * UTS (q·m = 0.999: 1,000 nodes per root child on average). `t3-100m` has T3's node law with 50 times as many
 * root children (so its size is concentrated near 50 × 2,000 × 1,000): 95,419,753 nodes, 83,504,783 leaves.
 * `small` (39,137 nodes) is for tests.
 */
export const TREES = {
  small: { b0: 200, q: 0.124, m: 8, seed: 3 },
  t3: { b0: 2000, q: 0.124875, m: 8, seed: 42 },
  't3-100m': { b0: 100_000, q: 0.124875, m: 8, seed: 42 },
} as const satisfies Record<string, TreeShape>;

export interface TreeCount {
  nodes: number;
  leaves: number;
}

export interface TreeState extends TreeCount {
  /** Unexpanded nodes, five state words each, in the first `size` words; the last five are expanded next. */
  stack: Int32Array;
  size: number;
  /** The root has not been counted yet (only the task holding the whole tree). */
  atRoot: boolean;
  /** The root's state words, and the indices [rootNext, rootEnd) of its children this task still has to visit. */
  root: Int32Array;
  rootNext: number;
  rootEnd: number;
  /** The tree's shape (four numbers): `split` expands nodes too and gets only the state. */
  shape: TreeShape;
}

const WORDS = 5;
/** The node being expanded, copied out of the stack before its children overwrite its slot. */
const top = new Int32Array(WORDS);

export function rootTask(shape: TreeShape): TreeState {
  const root = new Int32Array(WORDS);
  writeRootState(shape.seed, root);
  return { stack: new Int32Array(64 * WORDS), size: 0, atRoot: true, root, rootNext: 0, rootEnd: shape.b0, nodes: 0, leaves: 0, shape };
}

/** Nodes this task still has to visit (not counting their descendants). */
function pending(s: TreeState): number {
  return s.size / WORDS + (s.rootEnd - s.rootNext) + (s.atRoot ? 1 : 0);
}

/** Room for `words` more words on the stack (doubling). */
function reserve(s: TreeState, words: number): void {
  if (s.size + words <= s.stack.length) return;
  const grown = new Int32Array(Math.max(2 * s.stack.length, s.size + words));
  grown.set(s.stack.subarray(0, s.size));
  s.stack = grown;
}

/** Expands the node on top of the stack: pops it, pushes its children and counts it. */
function expandTop(s: TreeState): void {
  const at = s.size - WORDS;
  const children = nodeDraw(s.stack, at) < s.shape.q ? s.shape.m : 0;
  s.nodes++;
  s.size = at;
  if (children === 0) {
    s.leaves++;
    return;
  }
  const stack = s.stack;
  for (let i = 0; i < WORDS; i++) top[i] = stack[at + i]!;
  reserve(s, children * WORDS);
  for (let i = 0; i < children; i++) {
    writeChildState(top, i, s.stack, s.size);
    s.size += WORDS;
  }
}

/** Visits one node: the root, else the top of the stack (taking the next root child when the stack is empty). */
export function visit(s: TreeState): void {
  if (s.atRoot) {
    s.atRoot = false;
    s.nodes++;
    if (s.shape.b0 === 0) s.leaves++;
    return;
  }
  if (s.size === 0) {
    reserve(s, WORDS);
    writeChildState(s.root, s.rootNext++, s.stack, 0);
    s.size = WORDS;
  }
  expandTop(s);
}

export function hasWork(s: TreeState): boolean {
  return s.size > 0 || s.rootNext < s.rootEnd || s.atRoot;
}

/** The same visits as the task, in a plain loop on this thread: the sequential baseline. */
export function countSequentially(shape: TreeShape): TreeCount {
  const s = rootTask(shape);
  while (hasWork(s)) visit(s);
  return { nodes: s.nodes, leaves: s.leaves };
}

/** A task for part of the tree, nothing counted yet (its stack: exactly the words it gets). */
function part(s: TreeState, stack: Int32Array, rootNext: number, rootEnd: number): TreeState {
  return { stack, size: stack.length, atRoot: false, root: s.root, rootNext, rootEnd, nodes: 0, leaves: 0, shape: s.shape };
}

export default defineTask<TreeState, TreeCount>({
  name: 'binomial-tree',
  run(s, ctx) {
    while (hasWork(s)) {
      if (ctx.shouldMigrate()) return;
      visit(s);
      ctx.potentialSplit();
    }
    ctx.emit({ nodes: s.nodes, leaves: s.leaves });
  },
  split(s) {
    // One node left: open it up until two can be shared, or none is left.
    while (pending(s) === 1 && !s.atRoot) visit(s);
    const range = s.rootEnd - s.rootNext;
    if (range >= 2 || (range === 1 && s.size > 0)) {
      const mid = s.rootEnd - Math.max(1, range >> 1);
      const child = part(s, new Int32Array(0), mid, s.rootEnd);
      s.rootEnd = mid;
      return child;
    }
    const half = Math.floor(s.size / WORDS / 2);
    if (half === 0) return undefined;
    const given = s.stack.slice(0, half * WORDS);
    s.stack.copyWithin(0, half * WORDS, s.size);
    s.size -= half * WORDS;
    return part(s, given, 0, 0);
  },
  result: {
    initial: () => ({ nodes: 0, leaves: 0 }),
    combine: (a, b) => ({ nodes: a.nodes + b.nodes, leaves: a.leaves + b.leaves }),
  },
});
