/**
 * Test application for the worker pool: with `wait`, runs until the job variable `go` is set (a
 * shared-memory signal from the test) or it is asked to migrate; then offers split points (a pending split request is honoured once).
 * `spins` counts loop rounds, so a task returned unstarted is recognisable (spins still 0).
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface Gated {
  label: string;
  wait: boolean;
  spins: number;
  /** Split points offered at the end (default 64; the runtime looks at its control word every few calls). */
  offers?: number;
}

export default defineTask<Gated, string>({
  name: 'gated',
  run(s, ctx) {
    const deadline = Date.now() + 30_000; // a safety net: a broken test must not hang the worker forever
    while (s.wait && ctx.getVar<number>('go') !== 1 && Date.now() < deadline) {
      s.spins++;
      if (ctx.shouldMigrate()) return;
    }
    s.spins++;
    for (let i = 0; i < (s.offers ?? 64); i++) ctx.potentialSplit();
    ctx.emit(s.label);
  },
  split(s) {
    return { label: `${s.label}/child`, wait: false, spins: 0, offers: 0 };
  },
  result: { initial: () => '', combine: (a, b) => a + b },
  vars: { go: 'max' },
});
