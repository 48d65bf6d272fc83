/** Test application: sums the bytes of the job's binary input, which every task must see as a Buffer over shared memory. */
import { defineTask } from '../../../src/runtime/task.js';

export default defineTask<{ lo: number; hi: number; sum: number }, number, Buffer>({
  name: 'byte-sum',
  run(s, ctx) {
    const input = ctx.input;
    if (!Buffer.isBuffer(input) || !(input.buffer instanceof SharedArrayBuffer)) throw new Error('the job input is not a Buffer over shared memory');
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      const end = Math.min(s.hi, s.lo + 65_536);
      let sum = 0;
      for (let i = s.lo; i < end; i++) sum += input[i]!;
      s.sum += sum;
      s.lo = end;
      ctx.potentialSplit();
    }
    ctx.emit(s.sum);
  },
  split(s) {
    if (s.hi - s.lo < 4 * 1024 * 1024) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const upper = { lo: mid, hi: s.hi, sum: 0 };
    s.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
