/**
 * Test application for the dashboard: a minimum search over a range of hashes, publishing its
 * incumbent as the global variable `bound` (rule min), as a branch-and-bound search does, that
 * runs at a crawl until its *gate* opens (a file, named in the job input, comes into existence)
 * and then finishes at full speed. So a test decides when the job ends, with no timing guesses.
 *
 * While the gate is closed each item waits `holdMs`, and a task hands the rest of its range to a
 * fresh task after about `sliceMs`: the job shows a steady flow of completed tasks, steals and a
 * falling bound. Each task emits how many items it examined: the job's result is the range size.
 */
import { existsSync } from 'node:fs';
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface GatedRange {
  lo: number;
  hi: number;
  /** Items examined by this task so far (part of the state, so a migrating task carries it). */
  count: number;
}

export interface GateInput {
  /** The job runs at a crawl until this file exists. */
  gate: string;
  /** Wait per item while the gate is closed (ms). */
  holdMs: number;
  /** A task's run time while the gate is closed before it hands the rest on (ms). */
  sliceMs: number;
}

function hash(i: number): number {
  let x = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export default defineTask<GatedRange, number, GateInput>({
  name: 'gated-search',
  run(r, ctx) {
    const until = Date.now() + ctx.input.sliceMs;
    let open = existsSync(ctx.input.gate);
    while (r.lo < r.hi) {
      if (ctx.shouldMigrate()) return;
      if (!open) {
        Atomics.wait(sleeper, 0, 0, ctx.input.holdMs);
        open = existsSync(ctx.input.gate);
      }
      const h = hash(r.lo++);
      r.count++;
      const bound = ctx.getVar<number>('bound');
      if (bound === undefined || h < bound) ctx.setVar('bound', h);
      ctx.potentialSplit();
      if (!open && Date.now() >= until && r.lo < r.hi) {
        ctx.spawn({ lo: r.lo, hi: r.hi, count: 0 });
        break;
      }
    }
    ctx.emit(r.count);
  },
  split(r) {
    if (r.hi - r.lo < 2) return undefined;
    const mid = r.lo + Math.floor((r.hi - r.lo) / 2);
    const upper = { lo: mid, hi: r.hi, count: 0 };
    r.hi = mid;
    return upper;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { bound: 'min' },
});
