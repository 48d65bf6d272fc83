/**
 * Bench application: each task reads the job's binary input once (a checksum over a slice) and
 * contributes the wall-clock time it started at, per node process: the job's result says when the
 * first task ran on each node after `submit`.
 */
import { defineTask } from '../../src/runtime/worker/task.js';

type Starts = Record<string, number>;

export default defineTask<{ lo: number; hi: number; spin: number }, Starts, Buffer>({
  name: 'first-touch',
  run(s, ctx) {
    const started = Date.now();
    let sum = 0;
    for (let i = s.lo; i < s.hi; i += 4096) sum += ctx.input[i]!;
    for (let k = 0; k < s.spin; k++) {
      sum = (Math.imul(sum, 1103515245) + 12345) | 0;
      // A split point every 1,024 spins: the runtime looks at its control words on every 64th (CONTROL_CHECK_EVERY), so once per 65,536 spins.
      if ((k & 0x3ff) === 0) ctx.potentialSplit();
    }
    ctx.emit({ [String(process.pid)]: started + (sum === 0.5 ? 1 : 0) });
  },
  split(s) {
    if (s.spin < 2_000_000) return undefined;
    s.spin >>= 1;
    return { ...s };
  },
  result: {
    initial: () => ({}),
    combine: (a, b) => {
      const out = { ...a };
      for (const [k, v] of Object.entries(b)) out[k] = Math.min(out[k] ?? Infinity, v);
      return out;
    },
  },
});
