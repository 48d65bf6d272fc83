/**
 * Test application: a job whose final value is megabytes that no task emitted. Tasks count the bytes of
 * their ranges (small contributions, kept inline in the ledger); the reducer's `withVars`, run once by
 * the leader, turns the count into the bytes of the stream (big-result.ts's `streamBytes`). So the only
 * blob holding the value is the one the leader stores for the outcome: nothing else shares its content.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';
import bigResult, { streamBytes } from './big-result.js';

/** Bytes counted per step. */
const STEP = 256 * 1024;

export interface BigFinal { covered: number; bytes?: Uint8Array }

export default defineTask<{ lo: number; hi: number }, BigFinal>({
  name: 'big-final',
  run(s, ctx) {
    while (s.lo < s.hi) {
      const end = Math.min(s.hi, s.lo + STEP);
      ctx.emit({ covered: end - s.lo });
      s.lo = end;
      ctx.potentialSplit();
    }
  },
  split: (s) => bigResult.split!(s), // ranges split as big-result's do
  result: {
    initial: () => ({ covered: 0 }),
    combine: (a, b) => ({ covered: a.covered + b.covered }),
    withVars: (r) => ({ covered: r.covered, bytes: streamBytes(0, r.covered) }),
  },
});
