/**
 * Test application: one task that keeps its worker until the job variable `go` is set, ignoring
 * requests to migrate (so a node draining it stays draining until the test lets the task end).
 */
import { defineTask } from '../../../../src/runtime/worker/task.js';

export default defineTask<{ label: string }, string>({
  name: 'held',
  run(s, ctx) {
    const deadline = Date.now() + 60_000; // a safety net: a broken test must not hold the worker forever
    while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline);
    ctx.emit(s.label);
  },
  result: { initial: () => '', combine: (a, b) => a + b },
  vars: { go: 'max' },
});
