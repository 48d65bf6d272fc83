/**
 * Test application for object threads: the coupled decay (coupled-decay.ts: every kind of collective,
 * a message ring), with the first `heavy` objects made slower by `spinMs` per step (a skew that
 * balancing by measured load corrects by moving objects between threads), each object recording the
 * thread (`threadId`) every one of its steps ran on. With `exitAt`, object `index` ends its worker
 * thread (as a crash would) when it steps `iteration`, once: a file `marker` says it did. The result:
 * the decay's own result, which must equal the plain loops' bit for bit wherever objects ran, and each
 * object's threads.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';
import { defineMalleable } from '../../../../src/frameworks/malleable/malleable-app.js';
import decay, { type DecayParams, type DecayResult, type DecayState } from './coupled-decay.js';

export interface ProbeParams extends DecayParams {
  heavy?: number;
  spinMs?: number;
  exitAt?: { iteration: number; index: number; marker: string };
}

interface ProbeState extends DecayState {
  /** The thread of each step, in order. */
  ran: number[];
}

export interface ProbeResult {
  decay: DecayResult;
  /** Object by object, the thread of each of its steps. */
  ran: number[][];
}

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* a heavier object */ }
}

export default defineMalleable<ProbeParams, ProbeState, number, { decay: DecayResult; ran: number[] }, ProbeResult, Record<string, number>>({
  name: 'thread-probe',
  validate: decay.validate,
  objects: decay.objects,
  iterations: decay.iterations,
  reductions: decay.reductions,
  done: decay.done,
  init: (index, p, send) => ({ ...decay.init(index, p, send), ran: [] }),
  step(ctx) {
    const exit = ctx.params.exitAt;
    if (exit && exit.iteration === ctx.iteration && exit.index === ctx.index && !existsSync(exit.marker)) {
      if (isMainThread) throw new Error('exitAt needs objects on worker threads');
      writeFileSync(exit.marker, `exited at iteration ${ctx.iteration}\n`);
      process.exit(1); // on a worker thread: that thread ends, as if it crashed
    }
    if (ctx.index < (ctx.params.heavy ?? 0)) spin(ctx.params.spinMs ?? 0);
    ctx.state.ran.push(threadId);
    decay.step(ctx as never);
  },
  summary: (index, state, p) => ({ decay: decay.summary(index, state, p), ran: state.ran }),
  result: (summaries, p) => ({ decay: decay.result(summaries.map((s) => s.decay), p), ran: summaries.map((s) => s.ran) }),
});
