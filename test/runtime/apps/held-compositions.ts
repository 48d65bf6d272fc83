/**
 * Test application: the compositions count, but no task completes before the job variable `go` is
 * 1, so a test can change the job's nodes while the job surely still runs (no race with a fast machine).
 */
import { defineTask } from '../../../src/runtime/worker/task.js';
import compositions, { type CompositionState, exploreAll } from './compositions.js';

export default defineTask<CompositionState, number>({
  name: 'held-compositions',
  run(s, ctx) {
    if (!exploreAll(s, ctx)) return;
    const deadline = Date.now() + 60_000; // a safety net: a broken test must not hang the worker forever
    while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline) if (ctx.shouldMigrate()) return;
    ctx.emit(s.count);
  },
  split: (s) => compositions.split!(s),
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { go: 'max' },
});
