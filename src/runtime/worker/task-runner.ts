import { encodeVar, mergeRule } from '../../coord/recipes/global-variables.js';
import { CONTROL_CHECK_EVERY, reducerOf, type ResultReducer, type SpawnOptions, type TaskContext, type TaskType } from './task.js';
import { BUDGET, CANCEL, MIGRATE, SPLIT_WANT, WANT_SPLIT, type ControlFlags } from './control-flags.js';
import { encodeRecord, joinRecords, recordState } from './task-record.js';
import type { FromWorker, RunRequest } from './messages.js';
import { VarBoard } from './var-board.js';

/**
 * One view of each job's variable board in this worker (the job's setup keeps the same buffer for all its
 * tasks): its slot views are made once, not per task, and a value decoded for one task serves the next.
 */
const boards = new WeakMap<SharedArrayBuffer, VarBoard>();
function boardOf(buffer: SharedArrayBuffer, names: readonly string[]): VarBoard {
  let board = boards.get(buffer);
  if (!board) boards.set(buffer, (board = new VarBoard(buffer, names)));
  return board;
}

/** Control words are consulted on every CONTROL_CHECK_EVERY-th split point or migration check (a power of two). */
const CHECK_MASK = CONTROL_CHECK_EVERY - 1;

/**
 * Spawned children reach the node together, at most this many at once: one message and one ledger
 * transaction for the batch instead of one each. A record holds at most ~16 KiB (a larger state goes to
 * the data plane), so a batch with its parent's checkpoint stays far below a transaction's ~1 MB.
 */
export const SPAWN_BATCH = 32;

/** A child run inline that took longer than this (ms) ends inline running for its unit: the rest is handed over. */
const INLINE_MS = 0.5;

/** A wait for room in the spawn window that lasts this long (ms) gives up: the report goes anyway (never a hang; see roomForSpawnReport). */
const SPAWN_WAIT_LIMIT_MS = 30_000;

/** Thrown inside a child run inline when it needs what only a task of its own has (see RunContext.escalate). */
class NeedsOwnTask extends Error {}

/**
 * The context a running task sees. A class (not per-task closures) so that every task calls the
 * same functions: call sites in hot loops stay monomorphic and get inlined. The control words are
 * read with Atomics, but only every CONTROL_CHECK_EVERY-th call, so a task that offers a split point per
 * tiny unit of work does not pay an atomic load (a builtin call, ~8 ns) for each one.
 */
class RunContext implements TaskContext<unknown> {
  partial: unknown;
  migrating = false;
  /**
   * Children spawned and not yet handed to the node, copied at spawn as a message would copy them: as their
   * encoded first records when the task has an owner (handed over as they are), else as copies of their states.
   */
  spawned: unknown[] = [];
  /** The node that owns the task: its children are kept as encoded records (see RunRequest.owner). */
  readonly owner: string | undefined;
  /**
   * Whether spawns wait to be handed over in batches. Not for tasks whose failures are collected: their
   * children must be recorded at spawn, since such a task completes (with no contribution) when it fails;
   * nor once a task awaits (its children would otherwise wait out what it awaits).
   */
  batchSpawns: boolean;
  /** The children run inline after this task: how many, and their contributions folded into one. */
  inlined: { tasks: number; value: unknown } | undefined;
  /** Set when a child run inline asked for what only a task of its own has: its run is abandoned. */
  escalated = false;
  private splitTick = 0;
  private migrateTick = 0;
  private readonly localVars = new Map<string, unknown>();
  private readonly board: VarBoard | undefined;

  constructor(
    private readonly type: TaskType<unknown, unknown>,
    private readonly req: RunRequest,
    private readonly flags: ControlFlags,
    private readonly reducer: ResultReducer<unknown>,
    private readonly state: unknown,
    private readonly post: (m: FromWorker) => void,
    readonly input: unknown,
    private readonly inbox: () => unknown[],
    /** For a child run inline: the task whose unit it belongs to (it has no record and no id of its own). */
    private readonly unit?: RunContext,
  ) {
    this.view = flags.view;
    // An ordered result is kept as [key, value] pairs until the job folds them in key order. A child run
    // inline starts afresh (`req` is its unit's: the unit's partial is the unit's own).
    this.partial = req.partial !== undefined && !unit ? req.partial : reducer.ordered ? [] : reducer.initial();
    this.board = unit ? unit.board : req.board ? boardOf(req.board, req.varNames) : undefined;
    this.batchSpawns = type.failures !== 'collect';
    this.owner = req.owner;
  }

  /** A spawned child's state (decoded from its record when kept as one). */
  stateOf(kept: unknown): unknown {
    return this.owner !== undefined ? recordState(kept as Uint8Array) : kept;
  }

  /**
   * Folds the contribution of a child run inline into the unit's (the reducer's combine is associative and
   * commutative; an ordered result's [key, value] pairs are only collected: the job folds them in key order).
   */
  addInline(partial: unknown): void {
    if (!this.inlined) {
      this.inlined = { tasks: 1, value: partial };
      return;
    }
    this.inlined.tasks++;
    if (!this.reducer.ordered) this.inlined.value = this.reducer.combine(this.inlined.value, partial);
    else for (const pair of partial as unknown[]) (this.inlined.value as unknown[]).push(pair);
  }

  /** A context for `state` run inline after this task, as part of its unit. */
  inlineChild(state: unknown): RunContext {
    return new RunContext(this.type, this.req, this.flags, this.reducer, state, this.post, this.input, this.inbox, this);
  }

  /**
   * Children may run inline — here, after this task, as part of it — when a failure ends the job anyway
   * (no retries, failures not collected) and the task was not asynchronous.
   */
  get mayInline(): boolean {
    return this.batchSpawns && (this.type.retries ?? 0) === 0 && this.spawned.length > 0;
  }

  /** Nobody waits for work (a waiting request is taken: the unit's remaining children serve it) and no stop is asked. */
  nobodyWaits(): boolean {
    if (Atomics.load(this.view, MIGRATE) !== 0 || Atomics.load(this.view, CANCEL) !== 0) return false;
    return Atomics.load(this.view, WANT_SPLIT) <= 0 || !takeOne(this.view);
  }

  /**
   * A child run inline needs what only a task of its own has (a checkpoint, a message to the node, a split
   * or placement, a migration), or holds work that is wanted now: its run is abandoned (nothing it did
   * counts) and it is handed over as the task it was spawned as.
   */
  private escalate(): never {
    this.escalated = true;
    throw new NeedsOwnTask('a task run inline needs a task of its own');
  }

  private readonly view: Int32Array;

  get taskId(): string {
    return this.req.taskId;
  }

  get jobId(): string {
    return this.req.jobId;
  }

  potentialSplit(): boolean {
    if (this.escalated) this.escalate();
    if ((++this.splitTick & CHECK_MASK) !== 0) return false;
    if (Atomics.load(this.view, WANT_SPLIT) <= 0) return false;
    if (this.unit) this.escalate();
    // Work is wanted and spawned children are waiting here: they are that work (no split needed).
    if (this.spawned.length > 0) {
      if (takeOne(this.view)) this.handOverSpawned();
      return false;
    }
    if (!this.type.split) return false;
    if (!takeOne(this.view)) return false;
    const want = this.flags.getWide(SPLIT_WANT);
    const child = want >= 0 ? this.type.split(this.state, want) : this.type.split(this.state);
    if (child === undefined) {
      // Nothing to give now: put the request back, so the asker is served at a later split point instead of waiting for the task to end.
      Atomics.add(this.view, WANT_SPLIT, 1);
      return false;
    }
    this.handOver(child);
    return true;
  }

  shouldMigrate(): boolean {
    if (this.escalated) this.escalate();
    if ((++this.migrateTick & CHECK_MASK) !== 0) return false;
    if (this.unit && (Atomics.load(this.view, WANT_SPLIT) > 0 || Atomics.load(this.view, MIGRATE) !== 0 || Atomics.load(this.view, CANCEL) !== 0)) this.escalate();
    if (this.spawned.length > 0 && Atomics.load(this.view, WANT_SPLIT) > 0 && takeOne(this.view)) this.handOverSpawned();
    if (Atomics.load(this.view, MIGRATE) !== 0) {
      this.migrating = true;
      return true;
    }
    // A cancelled job stops its tasks through the same check.
    return Atomics.load(this.view, CANCEL) !== 0;
  }

  cancelled(): boolean {
    return Atomics.load(this.view, CANCEL) !== 0;
  }

  /**
   * A spawned child waits here, and goes to the node with the next ones: when SPAWN_BATCH are waiting, at
   * once when a worker or thief waits for work (the split request word, also read at split points and
   * migration checks), before a checkpoint or a message to the node, and at the latest with the task's
   * completion (recorded in the same transaction). A child placed on a chosen node goes at once.
   */
  spawn(childState: unknown, options?: SpawnOptions): void {
    if (this.unit && (this.escalated || options?.on !== undefined || this.spawned.length + this.unit.spawned.length + 1 >= SPAWN_BATCH)) this.escalate();
    if (options?.on !== undefined || !this.batchSpawns) {
      this.handOverSpawned();
      this.handOver(childState, options?.on);
      return;
    }
    this.spawned.push(this.owner !== undefined ? this.record(childState) : structuredClone(childState));
    if (this.unit) return; // handed over with the unit, if not run inline too
    if (this.spawned.length >= SPAWN_BATCH || (Atomics.load(this.view, WANT_SPLIT) > 0 && takeOne(this.view))) this.handOverSpawned();
  }

  /** A spawned child's first record; a state MessagePack cannot encode (a cycle) fails the task, naming it. */
  private record(childState: unknown): Buffer {
    try {
      return encodeRecord(this.owner!, childState);
    } catch (err) {
      throw new Error(`task ${this.req.taskId} spawned a state that cannot be recorded in the ledger (MessagePack): ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Hands the waiting children to the node with a checkpoint of this task (their records commit with it). */
  handOverSpawned(): void {
    if (this.spawned.length === 0) return;
    if (this.unit) this.escalate();
    const kept = this.spawned;
    this.spawned = [];
    const checkpoint = { state: this.state, partial: this.partial };
    this.roomForSpawnReport();
    if (this.owner !== undefined) this.post({ type: 'encoded-children', taskId: this.req.taskId, records: joinRecords(kept as Uint8Array[]), checkpoint });
    else this.post({ type: 'children', taskId: this.req.taskId, states: kept, checkpoint });
  }

  /**
   * Flow control (RunRequest.spawnWindow): before a spawn report goes, the thread waits while the node has a
   * window of this slot's reports unrecorded, so a task spawning a million children never buries the node's
   * thread under them (it records each as it comes, a window at a time). A stop asked of the task (migrate,
   * cancel) ends the wait, and so does SPAWN_WAIT_LIMIT_MS without an acknowledgement: the report then goes
   * all the same (late rather than never; the node records whatever it receives).
   */
  private roomForSpawnReport(): void {
    const window = this.req.spawnWindow;
    if (window === undefined) return;
    let until = 0;
    this.flags.awaitSpawnRoom(window, () => {
      if (Atomics.load(this.view, MIGRATE) !== 0 || Atomics.load(this.view, CANCEL) !== 0) return true;
      const now = performance.now();
      if (until === 0) until = now + SPAWN_WAIT_LIMIT_MS;
      return now >= until;
    });
  }

  emit(value: unknown, key?: number | string): void {
    if (!this.reducer.ordered) {
      this.partial = this.reducer.combine(this.partial, value);
      return;
    }
    if (typeof key !== 'number' && typeof key !== 'string') throw new TypeError(`task ${this.req.taskId}: an ordered result needs emit(value, key) with a number or string key`);
    (this.partial as Array<[number | string, unknown]>).push([key, value]);
  }

  progress(amount = 1): void {
    this.flags.addProgress(amount);
  }

  budget(): number | undefined {
    const b = this.flags.getWide(BUDGET);
    return b < 0 ? undefined : b;
  }

  checkpoint(): void {
    if (this.unit) this.escalate();
    this.handOverSpawned();
    this.post({ type: 'checkpoint', taskId: this.req.taskId, state: this.state, partial: this.partial });
  }

  send(body: unknown): void {
    if (this.unit) this.escalate();
    this.handOverSpawned(); // the node sees them before what the task says next (it may be about them)
    this.post({ type: 'app', taskId: this.req.taskId, body });
  }

  receive(): unknown[] {
    return this.inbox();
  }

  getVar<T>(name: string): T | undefined {
    const shared = this.board?.has(name) ? (this.board.read(name) as T | undefined) : undefined;
    const local = this.localVars.get(name) as T | undefined;
    if (local === undefined) return shared;
    if (shared === undefined) return local;
    return mergeVar(this.type, name, shared, local) as T;
  }

  setVar<T>(name: string, value: T): void {
    encodeVar(name, value); // an oversized value fails the task here, naming the variable
    const current = this.localVars.get(name);
    this.localVars.set(name, current === undefined ? value : mergeVar(this.type, name, current, value));
    this.post({ type: 'setVar', jobId: this.req.jobId, taskId: this.req.taskId, name, value });
  }

  /** The message is cloned on posting, so the checkpoint is the parent's state at this instant. */
  private handOver(childState: unknown, on?: string): void {
    this.roomForSpawnReport();
    this.post({ type: 'child', taskId: this.req.taskId, childState, checkpoint: { state: this.state, partial: this.partial }, ...(on !== undefined ? { on } : {}) });
  }
}

/** Takes one unit of the split request (a request is served once). */
function takeOne(view: Int32Array): boolean {
  for (;;) {
    const current = Atomics.load(view, WANT_SPLIT);
    if (current <= 0) return false;
    if (Atomics.compareExchange(view, WANT_SPLIT, current, current - 1) === current) return true;
  }
}

/**
 * Runs one task on the current thread and reports what happened through `post`. Kept apart from
 * the worker shell so that it can run (and be tested) on any thread.
 */
export async function runTask(
  type: TaskType<unknown, unknown>, req: RunRequest, flags: ControlFlags, post: (m: FromWorker) => void, input?: unknown, inbox: () => unknown[] = () => [],
): Promise<void> {
  const state = req.state;
  const ctx = new RunContext(type, req, flags, reducerOf(type), state, post, input, inbox);
  const started = performance.now();
  try {
    const pending = type.run(state, ctx);
    if (pending !== undefined) {
      // An asynchronous task: what it spawned before its first await goes now, what it spawns later at once.
      ctx.handOverSpawned();
      ctx.batchSpawns = false;
      await pending;
    }
    if (!ctx.migrating && ctx.mayInline) await runInline(type, ctx);
  } catch (err) {
    // Children not handed over yet are dropped with the failed run: a retry starts from the latest recorded state and spawns them again.
    post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) });
    return;
  }
  if (ctx.migrating) {
    ctx.handOverSpawned();
    post({ type: 'migrated', taskId: req.taskId, state, partial: ctx.partial });
  } else if (Atomics.load(flags.view, CANCEL) !== 0) {
    post({ type: 'cancelled', taskId: req.taskId }); // its work is not wanted, its children neither
  } else {
    const children = ctx.spawned.length === 0 ? {} : ctx.owner !== undefined ? { encodedChildren: joinRecords(ctx.spawned as Uint8Array[]) } : { children: ctx.spawned };
    const inline = ctx.inlined ? { inline: ctx.inlined } : {};
    post({ type: 'done', taskId: req.taskId, partial: ctx.partial, ...children, ...inline, ms: performance.now() - started });
  }
}

/**
 * Runs the unit's spawned children here, newest first (depth first), each as a task without a record of
 * its own, while nobody waits for work: its contribution and its own spawns join the unit, and all commit
 * with the unit's completion (counted as that many completions). A child that needs a task of its own (see
 * `escalate`) is handed over as it was spawned; a long one (over INLINE_MS) ends inline running, so work
 * is never held here for long; a waiting worker or thief gets the rest at the next child.
 */
async function runInline(type: TaskType<unknown, unknown>, unit: RunContext): Promise<void> {
  while (unit.spawned.length > 0 && unit.nobodyWaits()) {
    const kept = unit.spawned.pop()!;
    const state = unit.stateOf(kept);
    // The run mutates `state`; an abandoned child is handed over as it was spawned (a record is that already).
    const spawnedAs = unit.owner !== undefined ? kept : structuredClone(state);
    const child = unit.inlineChild(state);
    const started = performance.now();
    try {
      const pending = type.run(state, child);
      if (pending !== undefined) await pending;
    } catch (err) {
      if (!child.escalated) throw err;
    }
    if (child.escalated) {
      unit.spawned.push(spawnedAs);
      return;
    }
    unit.addInline(child.partial);
    for (const s of child.spawned) unit.spawned.push(s);
    if (performance.now() - started > INLINE_MS) return;
  }
}

/** Applies a variable's merge rule (as declared by the task type). */
export function mergeVar(type: TaskType<unknown, unknown>, name: string, current: unknown, proposed: unknown): unknown {
  const rule = type.vars?.[name] ?? 'replace';
  let merge = merges.get(rule);
  if (!merge) merges.set(rule, (merge = mergeRule(rule as never) as (a: unknown, b: unknown) => unknown));
  return merge(current, proposed);
}

/** Merge functions by rule (getVar runs in hot search loops: no closure per call). */
const merges = new Map<unknown, (a: unknown, b: unknown) => unknown>();
