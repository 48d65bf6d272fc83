/**
 * Test applications for retries and failure policies: a fan of leaves, each adding its index.
 * - `flaky`: every leaf throws the first time it runs on a worker thread, then succeeds: with
 *   retries the job is exact; without, it fails.
 * - `collecting`: leaves whose index is a multiple of 7 always throw; the job completes with the
 *   others' sum and lists the failed tasks.
 */
import { defineTask, type TaskDefinition } from '../../../src/runtime/worker/task.js';

export interface Leaf {
  index: number;
  leaves: number;
  fan: boolean;
}

/** Leaves (job:index) that already failed once in this worker thread: a retry on the same worker succeeds. */
const failedHere = new Set<string>();

function fanOut(s: Leaf, ctx: { spawn(state: unknown): void }): boolean {
  if (!s.fan) return false;
  for (let i = 0; i < s.leaves; i++) ctx.spawn({ index: i, leaves: s.leaves, fan: false });
  return true;
}

const common: Pick<TaskDefinition<Leaf, number>, 'result'> = { result: { initial: () => 0, combine: (a, b) => a + b } };

export const flaky = defineTask<Leaf, number>({
  ...common,
  name: 'flaky',
  retries: 2,
  run(s, ctx) {
    if (fanOut(s, ctx)) return;
    const key = `${ctx.jobId}:${s.index}`;
    if (!failedHere.has(key)) {
      failedHere.add(key);
      throw new Error(`leaf ${s.index} fails once`);
    }
    ctx.emit(s.index);
  },
});

export const flakyNoRetries = defineTask<Leaf, number>({ ...flaky, name: 'flaky-no-retries', retries: 0 });

export const collecting = defineTask<Leaf, number>({
  ...common,
  name: 'collecting',
  failures: 'collect',
  retries: 1,
  run(s, ctx) {
    if (fanOut(s, ctx)) return;
    if (s.index % 7 === 0) throw new Error(`leaf ${s.index} is a multiple of 7`);
    ctx.emit(s.index);
  },
});

/** Emits a float per block with its key: the ordered result must be identical however blocks were spread. */
export const orderedFloats = defineTask<{ lo: number; hi: number }, number>({
  name: 'ordered-floats',
  run(s, ctx) {
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      ctx.emit(blockValue(s.lo), s.lo);
      s.lo++;
      ctx.potentialSplit();
    }
  },
  split(s) {
    if (s.hi - s.lo < 2) return undefined;
    const mid = s.lo + ((s.hi - s.lo) >> 1);
    const upper = { lo: mid, hi: s.hi };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b, ordered: true },
});

/** Values of very different magnitudes, so that the sum depends on the order of additions. */
export function blockValue(i: number): number {
  let x = 0;
  for (let k = 0; k < 2_000; k++) x = Math.sin(x + i * 0.37 + k);
  return (i % 3 === 0 ? 1e16 : 1) * x + 1 / (i + 1);
}
