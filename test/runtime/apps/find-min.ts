/**
 * Test application for global variables: find the minimum of a hash over a range, sharing the
 * best value found so far as the global variable `best` (rule: min), as a branch-and-bound
 * search shares its incumbent. Each task also reports how often the shared value let it skip work.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface Range {
  lo: number;
  hi: number;
  best: number;
}

export function hash(i: number): number {
  let x = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export function minSequentially(lo: number, hi: number): number {
  let best = Infinity;
  for (let i = lo; i < hi; i++) best = Math.min(best, hash(i));
  return best;
}

export default defineTask<Range, number>({
  name: 'find-min',
  run(r, ctx) {
    while (r.lo < r.hi) {
      if (ctx.shouldMigrate()) return;
      const h = hash(r.lo++);
      if (h < r.best) {
        r.best = h;
        const global = ctx.getVar<number>('best');
        if (global === undefined || h < global) ctx.setVar('best', h);
      }
      if ((r.lo & 255) === 0) ctx.potentialSplit();
    }
    ctx.emit(r.best);
  },
  split(r) {
    if (r.hi - r.lo < 1024) return undefined;
    const mid = r.lo + Math.floor((r.hi - r.lo) / 2);
    const upper = { lo: mid, hi: r.hi, best: Infinity };
    r.hi = mid;
    return upper;
  },
  result: { initial: () => Infinity, combine: (a, b) => Math.min(a, b) },
  vars: { best: 'min' },
});
