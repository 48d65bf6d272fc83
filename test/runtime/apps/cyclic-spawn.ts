/** Test application: the root spawns a child whose state refers to itself (no MessagePack encoding exists for it). */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ root: boolean; self?: unknown }, number>({
  name: 'cyclic-spawn',
  run(s, ctx) {
    if (!s.root) return ctx.emit(1);
    const child: { root: boolean; self?: unknown } = { root: false };
    child.self = child;
    ctx.spawn(child);
    ctx.emit(1);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
