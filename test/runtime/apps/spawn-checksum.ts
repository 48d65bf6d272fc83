/**
 * Test application: the root spawns children with the values 1..n and records how many it spawned in
 * its state (so a recovered root resumes after what it recorded instead of spawning it again); each
 * child emits its value once. With `hold`, a child waits for the job variable `go` to be 1 first, so a
 * test can crash a node while recorded children still wait to run. With `gateRoot`, the root waits for
 * `go` before it spawns anything (a test can then ask for work while it waits); with `checkpointChildren`,
 * a child checkpoints before it emits (a child run inline then needs a task of its own). `retried` is the
 * same task type with retries (its children are never run inline).
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface SpawnChecksum {
  root: boolean;
  next: number;
  n: number;
  value: number;
  hold: boolean;
  gateRoot?: boolean;
  checkpointChildren?: boolean;
  /** The child with this value holds as with `hold`. */
  holdValue?: number;
}

export interface Tally {
  count: number;
  sum: number;
}

export function checksumRoot(n: number, hold = false): SpawnChecksum {
  return { root: true, next: 0, n, value: 0, hold };
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Waits for the job variable `go` (with a safety deadline: a broken test must not hang a worker forever); false if
 * asked to migrate. Reports one unit of progress as it starts waiting (a test sees that it holds).
 */
function gate(ctx: { getVar<T>(name: string): T | undefined; shouldMigrate(): boolean; progress(n?: number): void }): boolean {
  ctx.progress(1);
  const deadline = Date.now() + 60_000;
  while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline) {
    if (ctx.shouldMigrate()) return false;
    Atomics.wait(nap, 0, 0, 1);
  }
  return true;
}

const spawnChecksum = defineTask<SpawnChecksum, Tally>({
  name: 'spawn-checksum',
  run(s, ctx) {
    if (s.root) {
      if (s.gateRoot && !gate(ctx)) return;
      while (s.next < s.n) {
        s.next++;
        const extra = { ...(s.checkpointChildren ? { checkpointChildren: true } : {}), ...(s.holdValue !== undefined ? { holdValue: s.holdValue } : {}) };
        ctx.spawn({ root: false, next: 0, n: 0, value: s.next, hold: s.hold, ...extra });
      }
      return;
    }
    if ((s.hold || s.value === s.holdValue) && !gate(ctx)) return;
    if (s.checkpointChildren) ctx.checkpoint();
    ctx.emit({ count: 1, sum: s.value });
  },
  result: { initial: () => ({ count: 0, sum: 0 }), combine: (a, b) => ({ count: a.count + b.count, sum: a.sum + b.sum }) },
  vars: { go: 'max' },
});

export default spawnChecksum;
export const retried = defineTask<SpawnChecksum, Tally>({ ...spawnChecksum, name: 'spawn-checksum-retried', retries: 1 });
