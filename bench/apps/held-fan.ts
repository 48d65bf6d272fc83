/**
 * Benchmark application: a spawned fan of no-op tasks held in the pool. The root task spawns `fan`
 * children (each state a small index), then waits until the job's variable `go` is 1, so that while
 * it runs on the node's only worker every child waits in the node's pool: what a pooled task costs is
 * measured then (bench/memory-per-task.ts). Children emit 1; the result is fan + 1 (nothing lost).
 */
import { defineTask } from '../../src/runtime/worker/task.js';

export type HeldFan = { fan: number; spawned?: boolean } | { i: number };

/** How long the root waits for `go` at most: a broken bench must not hold its worker forever (ms). */
const HOLD_MS = 30 * 60_000;

export default defineTask<HeldFan, number>({
  name: 'held-fan',
  run(s, ctx) {
    if ('fan' in s) {
      if (!s.spawned) {
        for (let i = 0; i < s.fan; i++) ctx.spawn({ i });
        // The checkpoint hands the last spawns over (a batch is handed over when full) and records that they were made.
        s.spawned = true;
        ctx.checkpoint();
      }
      const deadline = Date.now() + HOLD_MS;
      while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline) if (ctx.shouldMigrate()) return;
    }
    ctx.emit(1);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { go: 'max' },
});
