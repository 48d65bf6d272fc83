/**
 * Test application: count the nodes of the tree of integer compositions of n. A node is a
 * sequence of positive integers summing to s ≤ n; its children extend it by 1…n−s. The tree is
 * very irregular (a node at sum s roots 2^(n−s) nodes) and its size is known in closed form: 2^n.
 * `work` adds a fixed amount of arithmetic per node, to make runs long enough to scale mid-run.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface CompositionState {
  n: number;
  /** Open nodes (their sums), depth-first: the last is explored next. */
  open: number[];
  /** Nodes counted so far by this task (part of the state so checkpoints carry it). */
  count: number;
  work: number;
}

export function rootState(n: number, work = 0): CompositionState {
  return { n, open: [0], count: 0, work };
}

/** The same count without any runtime: the sequential reference. */
export function countSequentially(n: number, work = 0): number {
  const open = [0];
  let count = 0;
  let sink = 0;
  while (open.length > 0) {
    const sum = open.pop()!;
    count++;
    sink += burn(work, sum);
    for (let k = 1; sum + k <= n; k++) open.push(sum + k);
  }
  return sink === -1 ? -1 : count;
}

function burn(work: number, seed: number): number {
  let x = seed | 1;
  for (let i = 0; i < work; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x === 0 ? 1 : 0;
}

/**
 * Explores the open nodes of `s` to the end without extra work, counting them (a task's loop for
 * held-compositions and tagged-compositions); false when the task must migrate first.
 */
export function exploreAll(s: { n: number; open: number[]; count: number }, ctx: { shouldMigrate(): boolean; potentialSplit(): void }): boolean {
  while (s.open.length > 0) {
    if (ctx.shouldMigrate()) return false;
    const sum = s.open.pop()!;
    s.count++;
    for (let k = 1; sum + k <= s.n; k++) s.open.push(sum + k);
    ctx.potentialSplit();
  }
  return true;
}

export default defineTask<CompositionState, number>({
  name: 'count-compositions',
  run(s, ctx) {
    let sink = 0;
    while (s.open.length > 0) {
      if (ctx.shouldMigrate()) return;
      const sum = s.open.pop()!;
      s.count++;
      sink += burn(s.work, sum);
      for (let k = 1; sum + k <= s.n; k++) s.open.push(sum + k);
      ctx.potentialSplit();
    }
    ctx.emit(s.count + (sink === -1 ? 1 : 0));
  },
  // Give away the oldest open node: the root of the largest unexplored subtree.
  split(s) {
    if (s.open.length < 2) return undefined;
    const sum = s.open.shift()!;
    return { n: s.n, open: [sum], count: 0, work: s.work };
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
