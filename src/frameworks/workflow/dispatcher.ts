/**
 * A dispatcher (AME §3.4, §4.1) without I/O. Tasks fall in `partitions` (task number mod P); each
 * partition has one owner under the current view: decentralized, partitions spread over the members
 * by rendezvous hashing and the submitter only gets counts; centralized, the leader owns them all.
 * An owner keeps only its own tasks (done bits and where each went) and, whenever the view changes,
 * reconciles: every member says which tasks it holds, the journal says which are done, and what
 * nobody holds and nobody finished is dispatched again, round-robin. Done tasks whose intermediate
 * outputs were on a node that is gone, and are still needed, run again to recreate them.
 */
import type { Rendezvous } from './rendezvous.js';
import type { View } from './protocol.js';
import type { Workflow } from './workflow.js';

export type DispatchMode = 'decentralized' | 'centralized';

/** What the journal (in the shared directory) says: where each finished task ran, and files saved there. */
export interface JournalState {
  done: Map<number, string>;
  saved: Set<number>;
}

export interface Reconciled {
  assign: Map<string, number[]>;
  recreate: Map<string, number[]>;
  counts: [number, number][];
}

export class Dispatcher {
  /** Per task (grown with the workflow: `tasks` of it are in use). */
  private done: Uint8Array;
  private tasks: number;
  private readonly doneOn: (string | undefined)[];
  private readonly counts: Int32Array;
  private owned: number[] = [];
  private view: View | undefined;
  /** Members whose held tasks are still to be heard, in the reconcile under way. */
  private pending = new Set<string>();
  private held = new Set<number>();
  dispatched = 0;
  recreated = 0;

  constructor(
    private readonly workflow: Workflow,
    readonly partitions: number,
    private readonly mode: DispatchMode,
    private readonly self: string,
  ) {
    this.tasks = workflow.tasks.length;
    this.done = new Uint8Array(this.tasks);
    this.doneOn = new Array(this.tasks);
    this.counts = new Int32Array(partitions);
  }

  partitionOf(task: number): number {
    return task % this.partitions;
  }

  /** The owner of a partition under a view (every member computes the same answer). */
  static ownerOf(partition: number, view: View, mode: DispatchMode, ring: Rendezvous): string {
    return mode === 'centralized' ? view.leader : ring.ownerOf(`p${partition}`);
  }

  /** A new view: the partitions this member owns now; a reconcile starts (ask every member what it holds). */
  newView(view: View, ring: Rendezvous): { ask: string[] } {
    this.view = view;
    this.owned = [];
    for (let p = 0; p < this.partitions; p++) if (Dispatcher.ownerOf(p, view, this.mode, ring) === this.self) this.owned.push(p);
    this.held = new Set();
    this.pending = this.owned.length > 0 ? new Set(view.members) : new Set();
    return { ask: [...this.pending] };
  }

  ownsAny(): boolean {
    return this.owned.length > 0;
  }

  /** A member's answer to the reconcile; true when every member has answered. */
  heldBy(member: string, epoch: number, tasks: number[]): boolean {
    if (!this.view || epoch !== this.view.epoch || !this.pending.has(member)) return false;
    for (const t of tasks) this.held.add(t);
    this.pending.delete(member);
    return this.pending.size === 0;
  }

  /** A member left during a reconcile: stop waiting for its answer. */
  forget(member: string): boolean {
    return this.pending.delete(member) && this.pending.size === 0;
  }

  reconciling(): boolean {
    return this.pending.size > 0;
  }

  /** Every member answered: with the journal read now, dispatch what nobody holds or finished. */
  reconcile(journal: JournalState): Reconciled {
    const view = this.view!;
    const alive = new Set(view.members);
    for (const [t, node] of journal.done) {
      if (!this.done[t]) this.markDone(t, node);
    }
    const assign = new Map<string, number[]>();
    const recreate = new Map<string, number[]>();
    const to = (map: Map<string, number[]>, t: number) => {
      const worker = view.members[t % view.members.length]!; // round-robin by task number (AME §3.4)
      let list = map.get(worker);
      if (!list) map.set(worker, (list = []));
      list.push(t);
    };
    const needed = this.stillNeeded(journal, alive);
    for (const p of this.owned) {
      for (let t = p; t < this.tasks; t += this.partitions) {
        if (this.held.has(t)) continue;
        if (!this.done[t]) {
          to(assign, t);
          this.dispatched++;
        } else if (needed[t]) {
          to(recreate, t);
          this.recreated++;
        }
      }
    }
    this.held = new Set();
    return { assign, recreate, counts: this.ownedCounts() };
  }

  /**
   * Done tasks to run again: one whose node is gone (or from an earlier run) and that wrote a file
   * not saved in the shared directory which an unfinished task (or another task run again) reads.
   * Walked children-first so that a chain of lost files is recreated whole.
   */
  private stillNeeded(journal: JournalState, alive: Set<string>): Uint8Array {
    const wf = this.workflow;
    const need = new Uint8Array(wf.tasks.length);
    for (let i = wf.order.length - 1; i >= 0; i--) {
      const t = wf.order[i]!;
      if (this.done[t] && (need[t] === 0)) continue;
      // t is unfinished (or runs again): producers of its inputs that are lost must run again.
      for (const f of wf.tasks[t]!.inputs) {
        const producer = wf.files[f]!.producer;
        if (producer < 0 || wf.files[f]!.marker || journal.saved.has(f) || !this.done[producer]) continue;
        const on = this.doneOn[producer];
        if (on === undefined || !alive.has(on)) need[producer] = 1;
      }
    }
    return need;
  }

  /** Tasks were added to the workflow (now `tasks` long). */
  grow(tasks: number): void {
    if (tasks > this.done.length) {
      const done = new Uint8Array(Math.max(tasks, 2 * this.done.length));
      done.set(this.done);
      this.done = done;
    }
    this.tasks = tasks;
  }

  /**
   * Tasks added from `from` on, outside a reconcile: those of partitions this member owns go to the
   * members of the view, round-robin as in a reconcile (during one, the reconcile dispatches them).
   */
  dispatchAdded(from: number): Map<string, number[]> {
    const assign = new Map<string, number[]>();
    if (!this.view || this.reconciling()) return assign;
    for (let t = from; t < this.tasks; t++) {
      if (this.done[t] || !this.owned.includes(this.partitionOf(t))) continue;
      const worker = this.view.members[t % this.view.members.length]!;
      let list = assign.get(worker);
      if (!list) assign.set(worker, (list = []));
      list.push(t);
      this.dispatched++;
    }
    return assign;
  }

  isDone(task: number): boolean {
    return this.done[task] === 1;
  }

  /** A worker finished `task` on `node`: true the first time (a recreation counts nothing). */
  markDone(task: number, node: string): boolean {
    this.doneOn[task] = node;
    if (this.done[task]) return false;
    this.done[task] = 1;
    const p = this.partitionOf(task);
    this.counts[p]!++;
    return true;
  }

  /** Did a task this member dispatched run (or finish) on `node`? Then its leaving needs a reconcile. */
  countFor(partition: number): number {
    return this.counts[partition]!;
  }

  /** Every task of the partition (as the workflow stands) is done. */
  partitionDone(partition: number): boolean {
    const size = partition < this.tasks ? Math.floor((this.tasks - 1 - partition) / this.partitions) + 1 : 0;
    return this.counts[partition]! >= size;
  }

  ownedCounts(): [number, number][] {
    return this.owned.map((p) => [p, this.counts[p]!]);
  }

  owns(partition: number): boolean {
    return this.owned.includes(partition);
  }
}
