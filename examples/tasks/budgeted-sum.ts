/** The task type the job-kind example runs: sums a range in blocks of the budget its node grants. */
import { defineTask } from '../../src/index.js';

export default defineTask<{ lo: number; hi: number }, number>({
  name: 'budgeted-sum',
  run(s, ctx) {
    ctx.send({ type: 'budget?' });
    let budget = ctx.budget();
    while (budget === undefined) budget = ctx.budget(); // the node answers in shared memory within microseconds
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      const end = Math.min(s.hi, s.lo + budget);
      let sum = 0;
      for (let i = s.lo; i < end; i++) sum += i;
      ctx.emit(sum);
      ctx.progress(end - s.lo);
      s.lo = end;
      ctx.checkpoint(); // a crash of this node resumes here, not from the start
      ctx.potentialSplit();
    }
  },
  split(s) {
    if (s.hi - s.lo < 20_000) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
