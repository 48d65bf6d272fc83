/** Test application: every task below `depth` spawns two children; the job counts the tasks (2^(depth+1) − 1). */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ level: number; depth: number }, number>({
  name: 'spawn-tree',
  run(s, ctx) {
    if (s.level < s.depth) {
      ctx.spawn({ level: s.level + 1, depth: s.depth });
      ctx.spawn({ level: s.level + 1, depth: s.depth });
    }
    ctx.emit(1);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
