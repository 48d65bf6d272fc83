/**
 * The task abstraction (seed 000 §3.7): application code marks its parallelism by giving a task
 * type a `split` that removes part of the remaining work from a running task's state and returns
 * it as the state of a new, disjoint task. The runtime decides when to split (potential splitting),
 * where tasks run, when they migrate, and how their results are combined. Task state is plain,
 * serializable data; code is loaded by module specifier on every node (weak migration, §3.4).
 */
import { resolveModule } from './builtin-code.js';

/**
 * How results emitted by tasks are combined. Unordered (the default), contributions are folded in
 * no defined order, so `combine` must be associative and commutative (floating-point sums then
 * differ in their last bits run to run). `ordered: true` makes results reproducible: every emit
 * carries a key (a block or iteration index), and the job's result folds all values in key order,
 * whatever the splits, steals, nodes or crashes were.
 */
export interface ResultReducer<R> {
  initial: () => R;
  combine: (acc: R, value: R) => R;
  ordered?: boolean;
  /**
   * Completes the job's result with the final values of its global variables, once every task has
   * counted (a variable never set is absent). A value published as a variable is durable at once, while
   * the run that published it may not count: a branch-and-bound incumbent found by a run whose node then
   * crashed is in `vars`, and the re-run, pruned by it, does not find it again.
   */
  withVars?: (result: R, vars: Readonly<Record<string, unknown>>) => R;
}

/** Where a spawned task should run (placement); the runtime falls back to this node if that one refuses. */
export interface SpawnOptions {
  on?: string;
}

/** Rules for the job's global variables (seed 000 §3.6), by name. */
export type VarRules = Record<string, 'min' | 'max' | 'replace' | ((current: never, proposed: never) => unknown)>;

/**
 * `potentialSplit()` and `shouldMigrate()` look at the node's control words (work wanted? stop?) on every
 * CONTROL_CHECK_EVERY-th call: a task that offers a split point per tiny unit of work (a search node) pays one
 * atomic load per CONTROL_CHECK_EVERY units. A task whose split points are far apart (a long block between
 * them) calls them CONTROL_CHECK_EVERY times in a row where it wants a look now.
 */
export const CONTROL_CHECK_EVERY = 64;

/**
 * What a running task sees of the runtime (the second argument of `run`): its split points, migration
 * and cancellation checks, the job's input, its global variables, and `emit` for its result.
 */
export interface TaskContext<R, I = unknown> {
  /** Id of the running task (unique within its job). */
  readonly taskId: string;
  readonly jobId: string;
  /**
   * The job's input: read-only data every task of the job shares (a distance matrix, a graph),
   * shipped once to each worker instead of inside every task's state.
   */
  readonly input: I;
  /**
   * A potential split point: when an idle worker or a steal request wants work it calls the task's `split`
   * and hands the new task over. Returns true if a task was split off. Looks at the control words on every
   * CONTROL_CHECK_EVERY-th call only (one atomic load), so it is nearly free per call.
   */
  potentialSplit(): boolean;
  /**
   * True when this task should stop now: its node is draining and its state will move to another
   * node (§3.4), or its job was cancelled. Return from `run` when it says so.
   */
  shouldMigrate(): boolean;
  /**
   * True when this task's work is not wanted any more: its job ended (done, failed or cancelled) or
   * this node no longer owns the task. Return from `run` when it says so; nothing it did counts.
   */
  cancelled(): boolean;
  /** Explicitly creates a new task with the given state (e.g. a parallel-for or a task tree), optionally on a chosen node. */
  spawn(state: unknown, options?: SpawnOptions): void;
  /** Adds `value` to this task's contribution to the job result (with `key` when the result is ordered). */
  emit(value: R, key?: number | string): void;
  /**
   * Reports `amount` units of progress (iterations, nodes searched). Costs an atomic add and a clock
   * stamp in shared memory, no message (call it per chunk of work, not per tiny step); the node reads
   * the sum of its workers' counters (exact beyond 2^31) and when each last moved.
   */
  progress(amount?: number): void;
  /** The amount of work the node currently grants this task (its kind sets it), or undefined. */
  budget(): number | undefined;
  /**
   * Saves the task's state and partial result durably now: after a crash of this node the task
   * resumes from here instead of from its last split. Costs one coordination write; use it at
   * natural boundaries of long tasks.
   */
  checkpoint(): void;
  /** Sends an application message to this node's job-kind code (the node-to-worker channel). */
  send(body: unknown): void;
  /** Messages the node's job-kind code sent to this worker since the last call (never blocks). */
  receive(): unknown[];
  /** The node-local value of a global variable (no network). */
  getVar<T>(name: string): T | undefined;
  /** Proposes a value for a global variable; it is merged by the variable's rule everywhere. */
  setVar<T>(name: string, value: T): void;
}

/**
 * A task type as an application writes it (`defineTask`): `run` works on a plain-data state `S`,
 * `split` hands part of the remaining work to a new task, `result` combines what tasks emit into `R`.
 */
export interface TaskDefinition<S, R, I = unknown> {
  /** Stable name of the task type (for logs and job listings). */
  name: string;
  /**
   * Runs the task on `state`, mutating it as work is done. Returning normally completes the task,
   * unless `ctx.shouldMigrate()` was true at the time: then `state` is migrated and resumed elsewhere.
   */
  run(state: S, ctx: TaskContext<R, I>): void | Promise<void>;
  /**
   * Removes part of the remaining work from `state` and returns it as a new task's state, or
   * undefined. `want`, when the node asks for a given amount of work (in the task's own units), is
   * that amount; otherwise the task chooses (half of what is left is the usual answer).
   */
  split?(state: S, want?: number): S | undefined;
  /** Times a failed task is run again from its latest checkpoint before it counts as failed (default 0). */
  retries?: number;
  /**
   * What a task that still fails does to its job: 'fail-job' (default) ends the job as failed;
   * 'collect' completes the task with no contribution and lists it in the outcome's `failures`.
   */
  failures?: 'fail-job' | 'collect';
  /**
   * Locality (placement): which pooled task a thief from node `thief` gets (an index into `states`,
   * oldest first); the default is the oldest.
   */
  forThief?(states: readonly S[], thief: string): number;
  /** How emitted results are combined (default: no result). */
  result?: ResultReducer<R>;
  /** Global variables the task uses, with their merge rules. */
  vars?: VarRules;
}

/** A task type as exported from a module (the module specifier is what travels between nodes). */
export interface TaskType<S, R, I = unknown> extends TaskDefinition<S, R, I> {
  readonly kind: 'tidepool.task';
}

/**
 * Declares a task type. Export it from a module (default export or a named export) so that every
 * node can load it by module specifier:
 *
 * ```ts
 * export default defineTask<{ lo: number; hi: number }, number>({
 *   name: 'sum-of-squares',
 *   run(s, ctx) { while (s.lo < s.hi) { ctx.emit(s.lo * s.lo); s.lo++; ctx.potentialSplit(); } },
 *   split(s) { if (s.hi - s.lo < 2) return undefined; const mid = (s.lo + s.hi) >> 1; const child = { lo: mid, hi: s.hi }; s.hi = mid; return child; },
 *   result: { initial: () => 0, combine: (a, b) => a + b },
 * });
 * ```
 */
export function defineTask<S, R = never, I = unknown>(definition: TaskDefinition<S, R, I>): TaskType<S, R, I> {
  if (!definition || typeof definition.run !== 'function') throw new TypeError('defineTask: `run` must be a function');
  if (definition.split !== undefined && typeof definition.split !== 'function') throw new TypeError('defineTask: `split` must be a function');
  if (definition.retries !== undefined && !(Number.isInteger(definition.retries) && definition.retries >= 0)) throw new TypeError('defineTask: `retries` must be a whole number ≥ 0');
  if (definition.failures !== undefined && definition.failures !== 'fail-job' && definition.failures !== 'collect') throw new TypeError("defineTask: `failures` must be 'fail-job' or 'collect'");
  return { ...definition, kind: 'tidepool.task' };
}

/** A reference to a task type that can travel: module specifier plus export name. */
export interface TaskRef {
  module: string;
  export: string;
}

/** Loads a task type from its module, a `builtin:` name from this installation (used by workers and nodes alike). */
export async function loadTaskType(ref: TaskRef): Promise<TaskType<unknown, unknown>> {
  const mod = (await import(resolveModule(ref.module))) as Record<string, unknown>;
  const value = mod[ref.export];
  if (!value || (value as { kind?: unknown }).kind !== 'tidepool.task') {
    throw new Error(`${ref.module} has no task type export "${ref.export}" (export the result of defineTask)`);
  }
  return value as TaskType<unknown, unknown>;
}

/** The reducer of a task type, or the "no result" reducer. */
export function reducerOf(type: TaskDefinition<unknown, unknown>): ResultReducer<unknown> {
  return type.result ?? { initial: () => null, combine: () => null };
}
