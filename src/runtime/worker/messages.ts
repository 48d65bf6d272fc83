import type { TaskRef } from '../task.js';

/** What the node asks of a worker. */
export type ToWorker =
  | { type: 'run'; run: RunRequest }
  | { type: 'shutdown' };

export interface RunRequest {
  taskId: string;
  jobId: string;
  ref: TaskRef;
  state: unknown;
  /** The task's result contribution so far (from a checkpoint), or undefined for a fresh task. */
  partial: unknown;
  /** The job's input, sent once per worker and job (the worker keeps it); absent afterwards. */
  input?: { value: unknown };
  /** The job's variable board (shared memory), if its task type declares vars. */
  board: SharedArrayBuffer | undefined;
  varNames: string[];
}

/** What a worker reports; every message names the task it concerns. */
export type FromWorker =
  | { type: 'ready' }
  /** A new task was split off (or spawned); `checkpoint` is the parent's state and partial result right after. */
  | { type: 'child'; taskId: string; childState: unknown; checkpoint: { state: unknown; partial: unknown } }
  | { type: 'done'; taskId: string; partial: unknown; searchNodes?: number }
  | { type: 'migrated'; taskId: string; state: unknown; partial: unknown }
  | { type: 'cancelled'; taskId: string }
  | { type: 'failed'; taskId: string; error: string }
  | { type: 'setVar'; jobId: string; name: string; value: unknown };
