/**
 * Test application: sums the bytes of the job's binary input, which every task must see as a Buffer over
 * shared memory; `work` rounds of busy work per 64 KiB keep the job long enough for every node to take part.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export default defineTask<{ lo: number; hi: number; sum: number; work?: number }, number, Buffer>({
  name: 'byte-sum',
  run(s, ctx) {
    const input = ctx.input;
    if (!Buffer.isBuffer(input) || !(input.buffer instanceof SharedArrayBuffer)) throw new Error('the job input is not a Buffer over shared memory');
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      const end = Math.min(s.hi, s.lo + 65_536);
      let sum = 0;
      for (let i = s.lo; i < end; i++) sum += input[i]!;
      s.sum += sum + spin(s.work ?? 0);
      s.lo = end;
      ctx.potentialSplit();
    }
    ctx.emit(s.sum);
  },
  split(s) {
    if (s.hi - s.lo < 4 * 1024 * 1024) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi, sum: 0, ...(s.work !== undefined ? { work: s.work } : {}) };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});

/** Busy work; returns 0. */
function spin(rounds: number): number {
  let x = rounds | 0;
  for (let k = 0; k < rounds; k++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x === 0.5 ? 1 : 0;
}
