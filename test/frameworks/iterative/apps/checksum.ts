/**
 * A test application whose tally proves exact accounting: it counts iterations, sums their indices
 * (any iteration lost or run twice changes the sum) and sums random floats (any change in the fold
 * order changes the last bits). Iteration i costs a random number of steps, as Monte Carlo
 * histories do.
 */
import { defineIterative } from '../../../../src/frameworks/iterative/define-iterative.js';

export interface Checksum {
  count: number;
  indexSum: number;
  floatSum: number;
  steps: number;
}

/** Sleeping (not spinning) gives a job a wall-clock length that does not depend on how loaded the machine is. */
const nap = new Int32Array(new SharedArrayBuffer(4));

export default defineIterative<Checksum, { work: number; sleepMs?: number }>({
  name: 'checksum',
  iterate(first, count, t, ctx) {
    if (ctx.params.sleepMs) Atomics.wait(nap, 0, 0, ctx.params.sleepMs);
    for (let i = first; i < first + count; i++) {
      const r = ctx.random(i);
      const steps = 1 + Math.floor(r.exponential() * ctx.params.work);
      let x = 0;
      for (let k = 0; k < steps; k++) x += r.uniform();
      t.count++;
      t.indexSum += i;
      t.floatSum += x / steps;
      t.steps += steps;
    }
  },
  result: {
    initial: () => ({ count: 0, indexSum: 0, floatSum: 0, steps: 0 }),
    combine: (a, b) => ({ count: a.count + b.count, indexSum: a.indexSum + b.indexSum, floatSum: a.floatSum + b.floatSum, steps: a.steps + b.steps }),
  },
});
