/**
 * Test application: a range sum whose every task carries a 5 MB payload in its state (checked at every
 * start), so task states, checkpoints, steals and migrations go through the data plane.
 */
import { createHash } from 'node:crypto';
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface BigState {
  lo: number;
  hi: number;
  /** Range size below which a task does not split (keeps the number of 5 MB states small). */
  minSplit: number;
  /** Busy-work rounds per item (makes tasks long enough to be stolen, drained and killed). */
  work: number;
  sum: number;
  payload: Uint8Array;
  digest: string;
  /** Hold every task, its range done, until the job variable `go` is 1 (test/support/gate.ts): the job surely still runs. */
  hold?: boolean;
}

export const PAYLOAD_BYTES = 5 * 1024 * 1024;

const digestOf = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The value of item i (what the job sums). */
export const itemValue = (i: number) => i % 251;

/** The exact result for items [0, n). */
export function expectedSum(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += itemValue(i);
  return sum;
}

/** Busy work (returns 0), so that tasks last long enough to be stolen, drained and killed. */
function spin(rounds: number, seed: number): number {
  let x = seed | 0;
  for (let k = 0; k < rounds; k++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x === 0.5 ? 1 : 0;
}

export function rootBigState(n: number, work: number, opts: { hold?: boolean } = {}): BigState {
  const payload = Buffer.alloc(PAYLOAD_BYTES);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 2654435761) >>> 27;
  return { lo: 0, hi: n, minSplit: Math.ceil(n / 16), work, sum: 0, payload, digest: digestOf(payload), ...(opts.hold ? { hold: true } : {}) };
}

export default defineTask<BigState, number>({
  name: 'big-state',
  run(s, ctx) {
    if (s.payload.length !== PAYLOAD_BYTES || digestOf(s.payload) !== s.digest) throw new Error(`task ${ctx.taskId}: its 5 MB payload arrived damaged`);
    while (s.lo < s.hi) {
      if (ctx.shouldMigrate()) return;
      s.sum += itemValue(s.lo) + spin(s.work, s.lo);
      s.lo++;
      ctx.potentialSplit();
    }
    const deadline = Date.now() + 120_000; // a safety net: a broken test must not hang the worker forever
    while (s.hold && ctx.getVar<number>('go') !== 1 && Date.now() < deadline) if (ctx.shouldMigrate()) return;
    ctx.emit(s.sum);
  },
  split(s) {
    if (s.hi - s.lo < s.minSplit) return undefined;
    const mid = s.lo + Math.floor((s.hi - s.lo) / 2);
    const child: BigState = { ...s, lo: mid, sum: 0 };
    s.hi = mid;
    return child;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { go: 'max' },
});
