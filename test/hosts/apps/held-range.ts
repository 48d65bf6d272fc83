/**
 * Test application for runs across test hosts: counts the units lo…hi−1 of a range, each exactly
 * once, but not before the job variable `go` is 1. While it waits it keeps offering to split its
 * range (halves), so every node of the job ends up holding part of it: a test can break a node
 * that surely owns unfinished work, then open the gate (test/support/gate.ts) and check the count.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface HeldRange {
  lo: number;
  hi: number;
}

export default defineTask<HeldRange, number>({
  name: 'held-range',
  run(s, ctx) {
    const deadline = Date.now() + 180_000; // a safety net: a broken test must not hang the worker forever
    while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline) {
      if (ctx.shouldMigrate()) return;
      ctx.potentialSplit();
    }
    ctx.emit(s.hi - s.lo);
  },
  split(s) {
    if (s.hi - s.lo < 2) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { go: 'max' },
});
