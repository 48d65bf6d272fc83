/** Test application: sums a slice of the job's input array (the input is shipped once per worker, not per task). */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ lo: number; hi: number; sum: number }, number, { values: number[] }>({
  name: 'sum-input',
  run(s, ctx) {
    const values = ctx.input.values;
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      s.sum += values[s.lo++]!;
      ctx.potentialSplit();
    }
    ctx.emit(s.sum);
  },
  split(s) {
    if (s.hi - s.lo < 1000) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi, sum: 0 };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
