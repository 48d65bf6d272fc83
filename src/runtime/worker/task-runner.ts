import { mergeRule } from '../../coord/recipes/global-variables.js';
import { reducerOf, type ResultReducer, type SpawnOptions, type TaskContext, type TaskType } from '../task.js';
import { BUDGET, CANCEL, MIGRATE, PROGRESS, SPLIT_WANT, WANT_SPLIT, type ControlFlags } from './control-flags.js';
import type { FromWorker, RunRequest } from './messages.js';
import { VarBoard } from './var-board.js';

/** Control words are consulted on every 16th split point or migration check. */
const CHECK_MASK = 15;

/**
 * The context a running task sees. A class (not per-task closures) so that every task calls the
 * same functions: call sites in hot loops stay monomorphic and get inlined. The control words are
 * read with Atomics, but only every 16th call, so a task that offers a split point per tiny unit
 * of work does not pay a fenced load for each one.
 */
class RunContext implements TaskContext<unknown> {
  partial: unknown;
  migrating = false;
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
  ) {
    this.view = flags.view;
    // An ordered result is kept as [key, value] pairs until the job folds them in key order.
    this.partial = req.partial !== undefined ? req.partial : reducer.ordered ? [] : reducer.initial();
    this.board = req.board ? new VarBoard(req.board, req.varNames) : undefined;
  }

  private readonly view: Int32Array;

  get taskId(): string {
    return this.req.taskId;
  }

  get jobId(): string {
    return this.req.jobId;
  }

  potentialSplit(): boolean {
    if ((++this.splitTick & CHECK_MASK) !== 0) return false;
    if (Atomics.load(this.view, WANT_SPLIT) <= 0 || !this.type.split) return false;
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
    if ((++this.migrateTick & CHECK_MASK) !== 0) return false;
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

  spawn(childState: unknown, options?: SpawnOptions): void {
    this.handOver(childState, options?.on);
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
    this.flags.addWide(PROGRESS, amount);
  }

  budget(): number | undefined {
    const b = this.flags.getWide(BUDGET);
    return b < 0 ? undefined : b;
  }

  checkpoint(): void {
    this.post({ type: 'checkpoint', taskId: this.req.taskId, state: this.state, partial: this.partial });
  }

  send(body: unknown): void {
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
    const current = this.localVars.get(name);
    this.localVars.set(name, current === undefined ? value : mergeVar(this.type, name, current, value));
    this.post({ type: 'setVar', jobId: this.req.jobId, name, value });
  }

  /** The message is cloned on posting, so the checkpoint is the parent's state at this instant. */
  private handOver(childState: unknown, on?: string): void {
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
  try {
    await type.run(state, ctx);
  } catch (err) {
    post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) });
    return;
  }
  if (ctx.migrating) post({ type: 'migrated', taskId: req.taskId, state, partial: ctx.partial });
  else if (Atomics.load(flags.view, CANCEL) !== 0) post({ type: 'cancelled', taskId: req.taskId });
  else post({ type: 'done', taskId: req.taskId, partial: ctx.partial });
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
