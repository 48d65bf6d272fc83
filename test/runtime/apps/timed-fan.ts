/** Test application: the root spawns `fanout` tasks, each keeping its worker busy for `ms` milliseconds (measured, not slept). */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ fanout: number; ms: number; root: boolean }, number>({
  name: 'timed-fan',
  run(s, ctx) {
    if (s.root) for (let i = 0; i < s.fanout; i++) ctx.spawn({ fanout: 0, ms: s.ms, root: false });
    else for (const end = performance.now() + s.ms; performance.now() < end;); // busy, as a compute task is
    ctx.emit(1);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
