/**
 * Counting the nodes of a UTS binomial tree (Unbalanced Tree Search, Olivier et al. 2006): the root has
 * b0 children; every other node has m children with probability q, else none. With q·m just below 1 each
 * non-root subtree has 1 / (1 − q·m) nodes on average (1000 for T3) but most die at once and a few run
 * thousands of levels deep: the tree is deep, narrow and impossible to partition in advance — the work
 * must be found and moved while it runs. Node shapes come from a SHA-1 splittable stream (uts-rng.ts), so
 * the count for given parameters is fixed however the tree is split.
 *
 * A task holds a range of the root's children still to visit and a stack of unexpanded nodes (five words
 * each), and visits depth-first. Its state is checkpointed in the ledger with every split, so it must stay
 * small: the root's b0 children are a range, never a stack of b0 nodes. `split` gives away the upper half
 * of that range while there is one (a few numbers, however many nodes), then the bottom half of the stack —
 * the nodes nearest the root, whose subtrees are the largest on average — so a thief gets as much work as
 * one hand-over can carry. In the deep, narrow parts the stack often holds a single node; `split` then
 * expands nodes itself until there are two to share (or none left), because a split request answered with
 * `undefined` is used up: the worker that asked would wait for this task's end.
 */
import { defineTask } from '../../src/index.js';
import { nodeDraw, pushChildState, pushRootState } from './uts-rng.js';

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
  /** Unexpanded nodes, five state words each; the last five are expanded next. */
  stack: number[];
  /** The root has not been counted yet (only the task holding the whole tree). */
  atRoot: boolean;
  /** The root's state words, and the indices [rootNext, rootEnd) of its children this task still has to visit. */
  root: number[];
  rootNext: number;
  rootEnd: number;
  /** The tree's shape (four numbers): `split` expands nodes too and gets only the state. */
  shape: TreeShape;
}

const WORDS = 5;
/** The node being expanded, copied out of the stack before its children overwrite its slot. */
const top = new Int32Array(WORDS);

export function rootTask(shape: TreeShape): TreeState {
  const root: number[] = [];
  pushRootState(shape.seed, root);
  return { stack: [], atRoot: true, root, rootNext: 0, rootEnd: shape.b0, nodes: 0, leaves: 0, shape };
}

/** Nodes this task still has to visit (not counting their descendants). */
function pending(s: TreeState): number {
  return s.stack.length / WORDS + (s.rootEnd - s.rootNext) + (s.atRoot ? 1 : 0);
}

/** Expands the node on top of the stack: pops it, pushes its children and counts it. */
function expandTop(s: TreeState): void {
  const stack = s.stack;
  const at = stack.length - WORDS;
  const children = nodeDraw(stack, at) < s.shape.q ? s.shape.m : 0;
  s.nodes++;
  if (children === 0) {
    s.leaves++;
    stack.length = at;
    return;
  }
  for (let i = 0; i < WORDS; i++) top[i] = stack[at + i]!;
  stack.length = at;
  for (let i = 0; i < children; i++) pushChildState(top, i, stack);
}

/** Visits one node: the root, else the top of the stack (taking the next root child when the stack is empty). */
export function visit(s: TreeState): void {
  if (s.atRoot) {
    s.atRoot = false;
    s.nodes++;
    if (s.shape.b0 === 0) s.leaves++;
    return;
  }
  if (s.stack.length === 0) pushChildState(s.root, s.rootNext++, s.stack);
  expandTop(s);
}

export function hasWork(s: TreeState): boolean {
  return s.stack.length > 0 || s.rootNext < s.rootEnd || s.atRoot;
}

/** The same visits as the task, in a plain loop on this thread: the sequential baseline. */
export function countSequentially(shape: TreeShape): TreeCount {
  const s = rootTask(shape);
  while (hasWork(s)) visit(s);
  return { nodes: s.nodes, leaves: s.leaves };
}

/** A task for part of the tree, nothing counted yet. */
function part(s: TreeState, stack: number[], rootNext: number, rootEnd: number): TreeState {
  return { stack, atRoot: false, root: s.root, rootNext, rootEnd, nodes: 0, leaves: 0, shape: s.shape };
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
    if (range >= 2 || (range === 1 && s.stack.length > 0)) {
      const mid = s.rootEnd - Math.max(1, range >> 1);
      const child = part(s, [], mid, s.rootEnd);
      s.rootEnd = mid;
      return child;
    }
    const half = Math.floor(s.stack.length / WORDS / 2);
    return half === 0 ? undefined : part(s, s.stack.splice(0, half * WORDS), 0, 0);
  },
  result: {
    initial: () => ({ nodes: 0, leaves: 0 }),
    combine: (a, b) => ({ nodes: a.nodes + b.nodes, leaves: a.leaves + b.leaves }),
  },
});
