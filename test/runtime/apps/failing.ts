/** Test application: a tree of spawned tasks whose leaves throw, to check how a job fails. */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ depth: number }, number>({
  name: 'failing',
  run(s, ctx) {
    if (s.depth >= 3) throw new Error(`task at depth ${s.depth} gives up`);
    ctx.spawn({ depth: s.depth + 1 });
    ctx.spawn({ depth: s.depth + 1 });
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
