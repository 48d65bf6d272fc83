import type { RunRequest } from '../../../src/runtime/worker/messages.js';
import type { WorkerEvent, Workers } from '../../../src/runtime/worker/worker-pool.js';

interface CompositionState {
  n: number;
  open: number[];
  count: number;
}

interface Slot {
  req: RunRequest | undefined;
  /** A pipelined task waiting to start right after `req`. */
  next: RunRequest | undefined;
  dropped: Set<string>;
  wantSplit: boolean;
  migrate: boolean;
  cancel: boolean;
}

/**
 * Simulated worker threads running the compositions count in quanta of tree nodes, with the same
 * potential-split, migration and cancellation points as the real task, but on the test's schedule.
 */
export class SimWorkers implements Workers {
  private readonly slots: Slot[];

  /** `fails`: asked at each tree node a task visits; true makes the task throw there (a simulated failure). */
  constructor(readonly size: number, private readonly onEvent: (e: WorkerEvent) => void, private readonly fails: () => boolean = () => false) {
    this.slots = Array.from({ length: size }, () => ({ req: undefined, next: undefined, dropped: new Set<string>(), wantSplit: false, migrate: false, cancel: false }));
  }

  idleSlots(): number[] {
    return this.slots.flatMap((s, i) => (s.req ? [] : [i]));
  }

  /** Like the real pool: a busy slot takes one more task, started right after the running one. */
  pipelineSlots(): number[] {
    return this.slots.flatMap((s, i) => (s.req && !s.next ? [i] : []));
  }

  currentTask(slot: number): string | undefined {
    return this.slots[slot]!.req?.taskId;
  }

  drop(slot: number, taskId: string): void {
    if (this.slots[slot]!.next?.taskId === taskId) this.slots[slot]!.dropped.add(taskId);
  }

  run(slot: number, req: RunRequest): void {
    const s = this.slots[slot]!;
    if (s.next) throw new Error(`slot ${slot} cannot take another task`);
    // The real worker receives a structured clone: so does the simulation.
    if (s.req) s.next = structuredClone(req);
    else Object.assign(s, { req: structuredClone(req), wantSplit: false, migrate: false, cancel: false });
  }

  requestSplit(slot: number): void {
    if (this.slots[slot]!.req) this.slots[slot]!.wantSplit = true;
  }

  clearSplit(slot: number): void {
    this.slots[slot]!.wantSplit = false;
  }

  splitRequested(slot: number): boolean {
    return this.slots[slot]!.wantSplit;
  }

  requestMigrate(slot: number): void {
    this.slots[slot]!.migrate = true;
  }

  cancel(slot: number): void {
    this.slots[slot]!.cancel = true;
  }

  /** Runs every busy slot for up to `quantum` tree nodes. */
  step(quantum: number): void {
    this.slots.forEach((s, slot) => {
      const req = s.req;
      if (!req) return;
      const state = req.state as CompositionState;
      const partial = (req.partial as number | undefined) ?? 0;
      for (let i = 0; i < quantum; i++) {
        if (s.migrate) return this.finish(slot, { type: 'migrated', taskId: req.taskId, state: structuredClone(state), partial });
        if (s.cancel) return this.finish(slot, { type: 'cancelled', taskId: req.taskId });
        if (this.fails()) return this.finish(slot, { type: 'failed', taskId: req.taskId, error: 'simulated failure' });
        const sum = state.open.pop();
        if (sum === undefined) return this.finish(slot, { type: 'done', taskId: req.taskId, partial: partial + state.count });
        state.count++;
        for (let k = 1; sum + k <= state.n; k++) state.open.push(sum + k);
        if (s.wantSplit && state.open.length >= 2) {
          s.wantSplit = false;
          const child: CompositionState = { n: state.n, open: [state.open.shift()!], count: 0 };
          this.onEvent({ slot, type: 'child', taskId: req.taskId, childState: child, checkpoint: structuredClone({ state, partial }) });
        }
      }
    });
  }

  /** A node crash: everything running is simply gone. */
  crash(): void {
    for (const s of this.slots) {
      s.req = undefined;
      s.next = undefined;
    }
  }

  private finish(slot: number, event: WorkerEvent extends infer E ? (E extends { slot: number } ? Omit<E, 'slot'> : never) : never): void {
    const s = this.slots[slot]!;
    s.req = undefined;
    // The pipelined task starts now, under the real worker's rules (worker-main.ts runOne), before the
    // node hears of the finished one (as with the real pool, the slot is never seen idle in between).
    const next = s.next;
    s.next = undefined;
    const skipped: WorkerEvent[] = [];
    if (next) {
      s.wantSplit = false;
      if (s.dropped.delete(next.taskId)) skipped.push({ slot, type: 'cancelled', taskId: next.taskId });
      else if (s.migrate || s.cancel) skipped.push({ slot, type: 'migrated', taskId: next.taskId, state: next.state, partial: next.partial });
      else s.req = next;
    }
    this.onEvent({ slot, ...event } as WorkerEvent);
    for (const e of skipped) this.onEvent(e);
  }

}
