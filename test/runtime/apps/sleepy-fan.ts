/** Benchmark/test application: the root spawns `fanout` small tasks, each doing `spin` iterations of arithmetic. */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ fanout: number; spin: number; root: boolean }, number>({
  name: 'fan',
  run(s, ctx) {
    if (s.root) for (let i = 0; i < s.fanout; i++) ctx.spawn({ fanout: 0, spin: s.spin, root: false });
    let x = 1;
    for (let i = 0; i < s.spin; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
    ctx.emit(x === 0 ? 2 : 1);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
