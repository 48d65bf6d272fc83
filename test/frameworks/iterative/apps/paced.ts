/**
 * The checksum application at a pace the test sets per process and thread: each call of `iterate`
 * (one chunk) first sleeps the chunk time of its worker thread, so a thread's speed is fixed however
 * loaded the machine is. `PACED_CHUNK_MS` (in the node process's environment) lists the chunk time of
 * each worker slot, e.g. `20,5`: slot 0 four times slower than slot 1; unset, or outside a worker
 * thread, `params.chunkMs`. With `PACED_LOG`, every chunk appends `slot first count endMs` (ms since
 * the epoch, on this machine's clock) to that file: who ran what, and when each thread last worked,
 * measured by the application, not by the balancer under test.
 */
import { appendFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { defineIterative } from '../../../../src/frameworks/iterative/define-iterative.js';
import checksum, { type Checksum } from './checksum.js';

const nap = new Int32Array(new SharedArrayBuffer(4));
const slot = (workerData as { slot?: unknown } | null)?.slot;
const pace = process.env.PACED_CHUNK_MS?.split(',').map(Number);
if (pace && typeof slot !== 'number' && workerData !== null) throw new Error('paced test app: no worker slot in workerData (the worker pool changed how it names its slots)');

export default defineIterative<Checksum, { work: number; chunkMs: number }>({
  name: 'paced-checksum',
  iterate(first, count, t, ctx) {
    const ms = typeof slot === 'number' ? pace?.[slot] ?? ctx.params.chunkMs : ctx.params.chunkMs;
    if (ms > 0 && typeof slot === 'number') Atomics.wait(nap, 0, 0, ms);
    checksum.iterative.iterate(first, count, t, ctx);
    const log = process.env.PACED_LOG;
    if (log && typeof slot === 'number') appendFileSync(log, `${slot} ${first} ${count} ${(performance.timeOrigin + performance.now()).toFixed(1)}\n`);
  },
  result: checksum.iterative.result,
});
