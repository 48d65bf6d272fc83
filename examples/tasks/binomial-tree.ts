/**
 * Counting the nodes of a UTS binomial tree (Unbalanced Tree Search, Olivier et al. 2006): the root has
 * b0 children; every other node has m children with probability q, else none. With q·m just below 1 each
 * non-root subtree has 1 / (1 − q·m) nodes on average (1000 for T3) but most die at once and a few run
 * thousands of levels deep: the tree is deep, narrow and impossible to partition in advance — the work
 * must be found and moved while it runs. Node shapes come from a SHA-1 splittable stream (uts-rng.ts), so
 * the count for given parameters is fixed however the tree is split.
 *
 * A task holds a stack of unexpanded nodes (five words each) and expands them depth-first; `split` gives
 * away the bottom half of the stack — the nodes nearest the root, whose subtrees are the largest on
 * average — so a thief gets as much work as one hand-over can carry. In the deep, narrow parts the stack
 * often holds a single node; `split` then expands nodes itself until there are two to share (or none
 * left), because a split request answered with `undefined` is used up: the idle worker that asked would
 * wait for this task's end (measured: bench/binomial-tree.ts, and the report of issue 16).
 */
import { defineTask } from '../../src/index.js';
import { nodeDraw, pushChildStates, pushRootState } from './uts-rng.js';

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
  /** The stack holds only the root, not yet expanded (it has b0 children, not the binomial law). */
  atRoot: boolean;
  /** The tree's shape (four numbers): `split` expands nodes too and gets only the state. */
  shape: TreeShape;
}

const WORDS = 5;
/** The node being expanded, copied out of the stack before its children overwrite its slot. */
const top = new Int32Array(WORDS);

export function rootTask(shape: TreeShape): TreeState {
  const stack: number[] = [];
  pushRootState(shape.seed, stack);
  return { stack, atRoot: true, nodes: 0, leaves: 0, shape };
}

/** Expands the node on top of the stack: pops it, pushes its children and counts it. */
export function expandTop(s: TreeState): void {
  const stack = s.stack;
  const shape = s.shape;
  const at = stack.length - WORDS;
  const children = s.atRoot ? shape.b0 : nodeDraw(stack, at) < shape.q ? shape.m : 0;
  s.atRoot = false;
  s.nodes++;
  if (children === 0) {
    s.leaves++;
    stack.length = at;
    return;
  }
  for (let i = 0; i < WORDS; i++) top[i] = stack[at + i]!;
  stack.length = at;
  pushChildStates(top, children, stack);
}

/** The same expansion as the task, in a plain loop on this thread: the sequential baseline. */
export function countSequentially(shape: TreeShape): TreeCount {
  const s = rootTask(shape);
  while (s.stack.length > 0) expandTop(s);
  return { nodes: s.nodes, leaves: s.leaves };
}

export default defineTask<TreeState, TreeCount>({
  name: 'binomial-tree',
  run(s, ctx) {
    while (s.stack.length > 0) {
      if (ctx.shouldMigrate()) return;
      expandTop(s);
      ctx.potentialSplit();
    }
    ctx.emit({ nodes: s.nodes, leaves: s.leaves });
  },
  split(s) {
    while (s.stack.length === WORDS) expandTop(s); // one node: open it up until two can be shared, or none is left
    const half = Math.floor(s.stack.length / WORDS / 2);
    if (half === 0) return undefined;
    return { stack: s.stack.splice(0, half * WORDS), atRoot: false, nodes: 0, leaves: 0, shape: s.shape };
  },
  result: {
    initial: () => ({ nodes: 0, leaves: 0 }),
    combine: (a, b) => ({ nodes: a.nodes + b.nodes, leaves: a.leaves + b.leaves }),
  },
});
