/**
 * The task abstraction (seed 000 §3.7): application code marks its parallelism by giving a task
 * type a `split` that removes part of the remaining work from a running task's state and returns
 * it as the state of a new, disjoint task. The runtime decides when to split (potential splitting),
 * where tasks run, when they migrate, and how their results are combined. Task state is plain,
 * serializable data; code is loaded by module specifier on every node (weak migration, §3.4).
 */

/** How results emitted by tasks are combined: `combine` must be associative and commutative. */
export interface ResultReducer<R> {
  initial: () => R;
  combine: (acc: R, value: R) => R;
}

/** Rules for the job's global variables (seed 000 §3.6), by name. */
export type VarRules = Record<string, 'min' | 'max' | 'replace' | ((current: never, proposed: never) => unknown)>;

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
   * A potential split point: costs a shared-memory read when no work is wanted; when an idle
   * worker or a steal request wants work it calls the task's `split` and hands the new task over.
   * Returns true if a task was split off.
   */
  potentialSplit(): boolean;
  /**
   * True when this task should stop now: its node is draining and its state will move to another
   * node (§3.4), or its job was cancelled. Return from `run` when it says so.
   */
  shouldMigrate(): boolean;
  /** True when the job has been cancelled (e.g. a decision search found its answer): stop now. */
  cancelled(): boolean;
  /** Explicitly creates a new task with the given state (e.g. a parallel-for or a task tree). */
  spawn(state: unknown): void;
  /** Adds `value` to this task's contribution to the job result. */
  emit(value: R): void;
  /** The node-local value of a global variable (no network). */
  getVar<T>(name: string): T | undefined;
  /** Proposes a value for a global variable; it is merged by the variable's rule everywhere. */
  setVar<T>(name: string, value: T): void;
}

export interface TaskDefinition<S, R, I = unknown> {
  /** Stable name of the task type (for logs and job listings). */
  name: string;
  /**
   * Runs the task on `state`, mutating it as work is done. Returning normally completes the task,
   * unless `ctx.shouldMigrate()` was true at the time: then `state` is migrated and resumed elsewhere.
   */
  run(state: S, ctx: TaskContext<R, I>): void | Promise<void>;
  /** Removes part of the remaining work from `state` and returns it as a new task's state, or undefined. */
  split?(state: S): S | undefined;
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
  return { ...definition, kind: 'tidepool.task' };
}

/** A reference to a task type that can travel: module specifier plus export name. */
export interface TaskRef {
  module: string;
  export: string;
}

/** Loads a task type from its module (used by workers and nodes alike). */
export async function loadTaskType(ref: TaskRef): Promise<TaskType<unknown, unknown>> {
  const mod = (await import(ref.module)) as Record<string, unknown>;
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
