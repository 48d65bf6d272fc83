/**
 * The task pool's tasks on one node as a state machine (after Dask's worker state machine): one
 * PoolTask per task the node holds or is about to hold, in one table, each in exactly one state.
 *
 *   (new) ─┬─ recording ─┐  (a child split off or spawned here: its record is being written)
 *          ├─ claiming ──┤  (offered to this node, or taken back from an offer: the claim is being written)
 *          ├─ migrating ─┤  (back from its worker to move or retry: its checkpoint is being written)
 *          │             ▼
 *          ├────────► pooled ─► running ─► completing ─► (gone)
 *          │             │        │  └───► migrating, abandoned
 *          └─ early ─────┼────────┘        (started before its claim settled; its reports are held)
 *                        ▼
 *                     offered ─► (gone: the receiver claimed it) or claiming (taken back)
 *
 * `move` is the only way a task changes state; a move the MOVES table does not list throws
 * IllegalTransition, naming the task and both states. `validate` checks what must hold between
 * events (the simulation tests run it after every step): every task in one state, the pool's order
 * holding exactly the pooled tasks, a worker slot exactly for tasks on a worker, an offer exactly for
 * offered tasks, held reports exactly for early starts, and the per-state counts.
 *
 * The node is idle when the table is empty; nothing else (no counter) says that work is under way.
 */
import type { WorkerEvent } from '../worker/worker-pool.js';
import type { TaskSnapshot } from './task-snapshot.js';

export type PoolTaskState =
  /** A child split off or spawned here; its record is being written (with its parent's checkpoint or completion). */
  | 'recording'
  /** Offered to this node, or taken back from an offer that failed: the claim on its record is being written. */
  | 'claiming'
  /** Back from its worker (to migrate, or to run again after a failure): its checkpoint is being written. */
  | 'migrating'
  /** Owned here, waiting in the local pool. */
  | 'pooled'
  /** Owned here, on a worker slot (running, or queued behind the slot's task). */
  | 'running'
  /** Offered to this node and started on an idle worker before the claim settled; its reports are held. */
  | 'early'
  /** On a worker but no longer this node's (its claim was refused, or its ownership lost): its reports are dropped until its run ends. */
  | 'abandoned'
  /** Handed to another node, waiting for its answer. */
  | 'offered'
  /** Its completion is being written. */
  | 'completing';

/** Where a move may go besides a state: the task leaves the table. */
export type PoolTaskEnd = 'gone';

export const POOL_TASK_STATES: readonly PoolTaskState[] = ['recording', 'claiming', 'migrating', 'pooled', 'running', 'early', 'abandoned', 'offered', 'completing'];

/** The legal moves: from each state (and from `new`, a task entering the table), the states it may go to. */
export const MOVES: Readonly<Record<PoolTaskState | 'new', readonly (PoolTaskState | PoolTaskEnd)[]>> = {
  new: ['recording', 'claiming', 'pooled', 'running', 'early', 'offered'],
  recording: ['pooled', 'running', 'offered', 'gone'],
  claiming: ['pooled', 'running', 'offered', 'gone'],
  migrating: ['pooled', 'running', 'offered', 'gone'],
  pooled: ['running', 'offered', 'gone'],
  running: ['completing', 'migrating', 'abandoned', 'gone'],
  early: ['running', 'abandoned', 'gone'],
  abandoned: ['gone'],
  offered: ['claiming', 'gone'],
  completing: ['gone'],
};

/** States in which a task occupies a worker slot. */
const ON_WORKER: ReadonlySet<PoolTaskState> = new Set(['running', 'early', 'abandoned']);
/** States in which the node holds the task's snapshot. */
const WITH_SNAPSHOT: ReadonlySet<PoolTaskState> = new Set(['recording', 'claiming', 'migrating', 'pooled', 'offered']);

export type TransferKind = 'steal' | 'migration' | 'placement';

/** An offered task: to whom, why, and until when the offer stands before it is taken back. */
export interface Offer {
  to: string;
  requestId: number | undefined;
  kind: TransferKind;
  deadline: number;
  /** The task as handed out (its record version is the one a take-back claims at). */
  handedOut: TaskSnapshot;
}

/** What a worker reports about one task (everything but `ready`). */
export type TaskEvent = Extract<WorkerEvent, { taskId: string }>;

/** The reports after which a run is over on its worker. */
export const RUN_ENDS: ReadonlySet<WorkerEvent['type']> = new Set(['done', 'migrated', 'failed', 'cancelled']);

export class PoolTask {
  /** `new` until it enters the table, `gone` once it left it (a task that left never comes back: a new PoolTask does). */
  state: PoolTaskState | 'new' | PoolTaskEnd = 'new';
  /** recording, claiming, migrating, pooled, offered: the task as this node holds it. */
  snapshot: TaskSnapshot | undefined;
  /** running, early, abandoned: its worker slot. */
  slot: number | undefined;
  /** offered: the offer. */
  offer: Offer | undefined;
  /** early: what its run reported before the claim settled, in order. */
  held: TaskEvent[] | undefined;
  /** Its latest durable state (start, split or checkpoint) while it runs: a retry resumes from it (kept only for task types with retries). */
  latest: { state: unknown; partial: unknown } | undefined;
  /** When it started on its worker (the runner's clock). */
  startedAt: number | undefined;
  /** Runs of it that failed here so far. */
  attempts = 0;

  constructor(readonly id: string) {}
}

export class IllegalTransition extends Error {
  constructor(readonly taskId: string, readonly from: PoolTaskState | 'new' | PoolTaskEnd, readonly to: PoolTaskState | PoolTaskEnd) {
    super(`task ${taskId}: ${from} → ${to} is not a move of the task pool's state machine (from ${from}: ${from === 'gone' ? 'none, it left the table' : MOVES[from].join(', ')})`);
    this.name = 'IllegalTransition';
  }
}

/** The table: every task of the node by id, the tasks of each state, and the pool's order (oldest first). */
export class PoolTasks {
  private readonly byId = new Map<string, PoolTask>();
  private readonly byState = new Map<PoolTaskState, Set<PoolTask>>(POOL_TASK_STATES.map((s) => [s, new Set()]));
  /** The pooled tasks, oldest first: workers take the newest (depth first), thieves the oldest. */
  private readonly order: PoolTask[] = [];

  /** `observe`: told of every move, after it is made (tests count the moves a run makes). */
  constructor(private readonly observe?: (taskId: string, from: PoolTaskState | 'new', to: PoolTaskState | PoolTaskEnd) => void) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): PoolTask | undefined {
    return this.byId.get(id);
  }

  count(state: PoolTaskState): number {
    return this.byState.get(state)!.size;
  }

  /** Whether any task is in one of `states`. */
  any(...states: PoolTaskState[]): boolean {
    return states.some((s) => this.byState.get(s)!.size > 0);
  }

  /** The tasks in `state` (a copy: moving them while iterating is safe). */
  inState(state: PoolTaskState): PoolTask[] {
    return [...this.byState.get(state)!];
  }

  /** The slots of the tasks on a worker (running, early or abandoned). */
  busySlots(): Set<number> {
    const slots = new Set<number>();
    for (const s of ON_WORKER) for (const t of this.byState.get(s)!) slots.add(t.slot!);
    return slots;
  }

  /** The pooled tasks, oldest first (read-only view). */
  get pooled(): readonly PoolTask[] {
    return this.order;
  }

  /** A task entering the table. */
  create(id: string, to: PoolTaskState): PoolTask {
    const existing = this.byId.get(id);
    if (existing) throw new IllegalTransition(id, existing.state, to);
    const task = new PoolTask(id);
    this.move(task, to);
    return task;
  }

  /**
   * Moves a task to `to` (or out of the table: 'gone'). What belongs only to the state it leaves goes
   * with it (its slot, offer or held reports); the caller sets what the new state needs.
   */
  move(task: PoolTask, to: PoolTaskState | PoolTaskEnd, pooledAt?: number): void {
    const from = task.state;
    if (from === 'gone' || !MOVES[from].includes(to)) throw new IllegalTransition(task.id, from, to);
    if (from === 'new') {
      this.byId.set(task.id, task);
    } else {
      this.byState.get(from)!.delete(task);
      if (from === 'pooled') this.order.splice(this.positionOf(task, pooledAt), 1);
    }
    if (to === 'gone') {
      this.byId.delete(task.id);
      task.state = 'gone';
      task.slot = task.offer = task.held = task.snapshot = task.latest = undefined;
      this.observe?.(task.id, from, to);
      return;
    }
    task.state = to;
    this.byState.get(to)!.add(task);
    if (to === 'pooled') this.order.push(task);
    if (!ON_WORKER.has(to)) task.slot = undefined;
    if (to !== 'offered') task.offer = undefined;
    if (to !== 'early') task.held = undefined;
    if (!WITH_SNAPSHOT.has(to)) task.snapshot = undefined;
    this.observe?.(task.id, from, to);
  }

  /** Where a pooled task is in the pool's order: at `hint`, at either end (the usual places), or found. */
  private positionOf(task: PoolTask, hint: number | undefined): number {
    const last = this.order.length - 1;
    if (hint !== undefined && this.order[hint] === task) return hint;
    if (this.order[last] === task) return last;
    if (this.order[0] === task) return 0;
    return this.order.indexOf(task);
  }

  /** Takes the pooled task at `index` (0: the oldest) out of the pool, into `to`. */
  takePooled(index: number, to: PoolTaskState | PoolTaskEnd): PoolTask {
    const task = this.order[index];
    if (!task) throw new Error(`no pooled task at ${index} (${this.order.length} pooled)`);
    this.move(task, to, index);
    return task;
  }

  /**
   * The table's invariants; throws naming the first that fails. `workers`: the node's worker count
   * (every slot in range).
   */
  validate(workers?: number): void {
    const fail = (what: string) => {
      throw new Error(`pool task table: ${what}`);
    };
    let counted = 0;
    for (const state of POOL_TASK_STATES) {
      for (const t of this.byState.get(state)!) {
        counted++;
        if (t.state !== state) fail(`task ${t.id} is listed as ${state} but is ${t.state}`);
        if (this.byId.get(t.id) !== t) fail(`task ${t.id} (${state}) is not the table's task of that id`);
        if (ON_WORKER.has(state) !== (t.slot !== undefined)) fail(`task ${t.id} is ${state} ${t.slot === undefined ? 'without' : 'with'} a worker slot`);
        if (t.slot !== undefined && workers !== undefined && (t.slot < 0 || t.slot >= workers)) fail(`task ${t.id} is on slot ${t.slot} of ${workers}`);
        if ((state === 'offered') !== (t.offer !== undefined)) fail(`task ${t.id} is ${state} ${t.offer ? 'with' : 'without'} an offer`);
        if ((state === 'early') !== (t.held !== undefined)) fail(`task ${t.id} is ${state} ${t.held ? 'with' : 'without'} held reports`);
        if (WITH_SNAPSHOT.has(state) && t.snapshot === undefined) fail(`task ${t.id} is ${state} without its snapshot`);
        if (t.snapshot !== undefined && t.snapshot.id !== t.id) fail(`task ${t.id} holds the snapshot of ${t.snapshot.id}`);
      }
    }
    if (counted !== this.byId.size) fail(`${this.byId.size} tasks by id, ${counted} by state`);
    if (this.order.length !== this.count('pooled')) fail(`${this.order.length} tasks in the pool's order, ${this.count('pooled')} pooled`);
    const seen = new Set<PoolTask>();
    for (const t of this.order) {
      if (t.state !== 'pooled') fail(`task ${t.id} is in the pool's order but ${t.state}`);
      if (seen.has(t)) fail(`task ${t.id} is twice in the pool's order`);
      seen.add(t);
    }
  }
}
