import { reducerOf, type TaskContext, type TaskType } from '../task.js';
import { CANCEL, MIGRATE, WANT_SPLIT, type ControlFlags } from './control-flags.js';
import type { FromWorker, RunRequest } from './messages.js';
import { VarBoard } from './var-board.js';

/**
 * Runs one task on the current thread and reports what happened through `post`. Kept apart from
 * the worker shell so that it can run (and be tested) on any thread.
 */
export async function runTask(type: TaskType<unknown, unknown>, req: RunRequest, flags: ControlFlags, post: (m: FromWorker) => void): Promise<void> {
  const reducer = reducerOf(type);
  let partial = req.partial === undefined ? reducer.initial() : req.partial;
  const state = req.state;
  const board = req.board ? new VarBoard(req.board, req.varNames) : undefined;
  const localVars = new Map<string, unknown>();
  let migrating = false;

  const handOver = (childState: unknown) => {
    // The message is cloned on posting, so the checkpoint is the parent's state at this instant.
    post({ type: 'child', taskId: req.taskId, childState, checkpoint: { state, partial } });
  };

  const ctx: TaskContext<unknown> = {
    taskId: req.taskId,
    jobId: req.jobId,
    potentialSplit() {
      if (Atomics.load(flags.view, WANT_SPLIT) <= 0 || !type.split) return false;
      if (!flags.take(WANT_SPLIT)) return false;
      const child = type.split(state);
      if (child === undefined) return false;
      handOver(child);
      return true;
    },
    shouldMigrate() {
      if (Atomics.load(flags.view, MIGRATE) === 0) return false;
      migrating = true;
      return true;
    },
    cancelled() {
      return Atomics.load(flags.view, CANCEL) !== 0;
    },
    spawn(childState: unknown) {
      handOver(childState);
    },
    emit(value: unknown) {
      partial = reducer.combine(partial, value);
    },
    getVar<T>(name: string): T | undefined {
      const shared = board?.has(name) ? (board.read(name) as T | undefined) : undefined;
      const local = localVars.get(name) as T | undefined;
      if (local === undefined) return shared;
      if (shared === undefined) return local;
      return mergeVar(type, name, shared, local) as T;
    },
    setVar<T>(name: string, value: T) {
      const current = localVars.get(name);
      localVars.set(name, current === undefined ? value : mergeVar(type, name, current, value));
      post({ type: 'setVar', jobId: req.jobId, name, value });
    },
  };

  try {
    await type.run(state, ctx);
  } catch (err) {
    post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) });
    return;
  }
  if (migrating) post({ type: 'migrated', taskId: req.taskId, state, partial });
  else if (Atomics.load(flags.view, CANCEL) !== 0) post({ type: 'cancelled', taskId: req.taskId });
  else post({ type: 'done', taskId: req.taskId, partial });
}

/** Applies a variable's merge rule (as declared by the task type). */
export function mergeVar(type: TaskType<unknown, unknown>, name: string, current: unknown, proposed: unknown): unknown {
  const rule = type.vars?.[name];
  if (rule === 'min') return (proposed as number) < (current as number) ? proposed : current;
  if (rule === 'max') return (proposed as number) > (current as number) ? proposed : current;
  if (typeof rule === 'function') return (rule as (a: unknown, b: unknown) => unknown)(current, proposed);
  return proposed;
}
