/**
 * Test application for the probe job kind (probe-kind.ts): sums f(i) over a range in blocks whose
 * size is the budget the node grants, reporting progress and checkpointing after every block. The
 * root asks its node (through the task-to-kind channel) for the job's members and places one part
 * of the range on each (spawn with `on`). With `hold`, no task completes before the job variable
 * `go` is 1 (so a test can crash a node while its tasks surely still hold checkpoints); with
 * `forever`, tasks run until the job ends (cancel tests).
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface ProbeState {
  lo: number;
  hi: number;
  /** Where this task's range began: a task that starts with lo > origin resumed from a checkpoint. */
  origin: number;
  root: boolean;
  hold: boolean;
  forever: boolean;
}

export interface ProbeResult {
  sum: number;
  /** Tasks that started from a checkpoint taken mid-range (after a crash or a migration). */
  resumed: number;
}

/** The value summed for item i (cheap to check independently: see expectedSum). */
export function f(i: number): number {
  return (i % 1_000) * 3 + 1;
}

export function expectedSum(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += f(i);
  return sum;
}

export function probeRoot(n: number, opts: { hold?: boolean; forever?: boolean } = {}): ProbeState {
  return { lo: 0, hi: n, origin: 0, root: true, hold: opts.hold ?? false, forever: opts.forever ?? false };
}

/** Busy work per item, so blocks take long enough to be seen running. */
function burn(i: number): number {
  let x = i | 1;
  for (let k = 0; k < 200; k++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

/** Waits (spinning on the node's shared memory and the message channel) for a condition, with a safety deadline. */
function until<T>(get: () => T | undefined, what: string): T {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`probe task: no ${what} from the node within 20 s`);
  }
}

export default defineTask<ProbeState, ProbeResult>({
  name: 'probe-task',
  run(s, ctx) {
    if (s.lo > s.origin) ctx.emit({ sum: 0, resumed: 1 });
    if (s.root) {
      s.root = false;
      ctx.send({ type: 'want-peers' });
      const peers = until(() => ctx.receive().find((m): m is { peers: string[] } => typeof m === 'object' && m !== null && 'peers' in m)?.peers, 'member list');
      // Placement: one slice of the range for every other member, the rest stays here.
      const slice = Math.floor((s.hi - s.lo) / (peers.length + 1));
      for (const peer of peers) {
        const start = s.hi - slice;
        ctx.spawn({ lo: start, hi: s.hi, origin: start, root: false, hold: s.hold, forever: s.forever }, { on: peer });
        s.hi = start;
      }
    }
    ctx.send({ type: 'want-budget' });
    const budget = until(() => ctx.budget(), 'budget');
    let sink = 0;
    while (s.lo < s.hi || s.forever) {
      if (ctx.shouldMigrate()) return;
      if (s.forever) {
        sink += burn(s.lo);
        continue;
      }
      const end = Math.min(s.hi, s.lo + budget);
      let sum = 0;
      for (let i = s.lo; i < end; i++) {
        sum += f(i);
        sink += burn(i);
      }
      ctx.emit({ sum, resumed: 0 });
      ctx.progress(end - s.lo);
      s.lo = end;
      ctx.checkpoint();
      ctx.potentialSplit();
    }
    const deadline = Date.now() + 60_000; // a safety net: a broken test must not hang a worker forever
    while (s.hold && ctx.getVar<number>('go') !== 1 && Date.now() < deadline) if (ctx.shouldMigrate()) return;
    if (sink === 0.5) ctx.emit({ sum: 0, resumed: 0 }); // keeps the busy work from being optimised away
  },
  split(s, want) {
    const left = s.hi - s.lo;
    if (s.forever || left < 2) return undefined;
    const give = Math.max(1, Math.min(left - 1, want ?? Math.floor(left / 2)));
    const start = s.hi - give;
    s.hi = start;
    return { lo: start, hi: start + give, origin: start, root: false, hold: s.hold, forever: false };
  },
  result: { initial: () => ({ sum: 0, resumed: 0 }), combine: (a, b) => ({ sum: a.sum + b.sum, resumed: a.resumed + b.resumed }) },
  vars: { go: 'max' },
});
