/**
 * Benchmark application: a flat map of `hi − lo` no-op items as ONE splittable task (potential
 * splitting, seed 000 §3.7): idle workers split the remaining range in half, so tasks are made only
 * when a worker wants work. The result is the number of items, to check nothing was lost or doubled.
 */
import { defineTask } from '../../src/runtime/worker/task.js';

export interface Range {
  lo: number;
  hi: number;
}

/** The per-item work: nothing, behind a call the compiler cannot remove. */
export function noop(i: number): number {
  return i === -1 ? 0 : 1;
}

export default defineTask<Range, number>({
  name: 'noop-range',
  run(s, ctx) {
    let done = 0;
    while (s.lo < s.hi) {
      done += noop(s.lo++);
      if ((s.lo & 63) === 0) {
        ctx.potentialSplit();
        if (ctx.shouldMigrate()) break;
      }
    }
    ctx.emit(done);
  },
  split(s) {
    if (s.hi - s.lo < 128) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const child = { lo: mid, hi: s.hi };
    s.hi = mid;
    return child;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
