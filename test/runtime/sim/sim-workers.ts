import type { RunRequest } from '../../../src/runtime/worker/messages.js';
import type { WorkerEvent, Workers } from '../../../src/runtime/worker/worker-pool.js';

interface CompositionState {
  n: number;
  open: number[];
  count: number;
}

interface Slot {
  req: RunRequest | undefined;
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

  constructor(readonly size: number, private readonly onEvent: (e: WorkerEvent) => void) {
    this.slots = Array.from({ length: size }, () => ({ req: undefined, wantSplit: false, migrate: false, cancel: false }));
  }

  idleSlots(): number[] {
    return this.slots.flatMap((s, i) => (s.req ? [] : [i]));
  }

  run(slot: number, req: RunRequest): void {
    const s = this.slots[slot]!;
    if (s.req) throw new Error(`slot ${slot} busy`);
    // The real worker receives a structured clone: so does the simulation.
    Object.assign(s, { req: structuredClone(req), wantSplit: false, migrate: false, cancel: false });
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
    for (const s of this.slots) s.req = undefined;
  }

  private finish(slot: number, event: WorkerEvent extends infer E ? (E extends { slot: number } ? Omit<E, 'slot'> : never) : never): void {
    this.slots[slot]!.req = undefined;
    this.onEvent({ slot, ...event } as WorkerEvent);
  }
}
