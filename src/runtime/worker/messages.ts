import type { TaskRef } from '../task.js';
import type { SharedInputForm } from './shared-input.js';

/** What the node asks of a worker. */
export type ToWorker =
  /** What every task of a job shares, sent once per worker and job (per-task messages stay small). */
  | { type: 'job'; job: JobSetup }
  | { type: 'run'; run: TaskMessage }
  /** A pipelined task this worker has not started must not run (its ownership was lost): report it cancelled. */
  | { type: 'drop'; taskId: string }
  /** An application message from the node's job-kind code to the task running here (TaskContext.receive). */
  | { type: 'app'; body: unknown }
  | { type: 'shutdown' };

/** Job setups a worker keeps (oldest dropped first); the pool mirrors the same order to know what a worker holds. */
export const JOB_SETUPS_KEPT = 4;

export interface JobSetup {
  jobId: string;
  ref: TaskRef;
  /** The job's input: a value (structured clone), or shared bytes (no copy; see shared-input.ts). */
  input?: { value: unknown } | { shared: Uint8Array; form: SharedInputForm };
  board: SharedArrayBuffer | undefined;
  varNames: string[];
}

/** The per-task part of a run request, as it crosses the thread boundary. */
export type TaskMessage = Pick<RunRequest, 'taskId' | 'jobId' | 'state' | 'partial'> & {
  /**
   * Sent while the worker still ran another task (short tasks are pipelined so the worker never
   * waits for the node): the control word may still carry requests meant for that task, so at its
   * start a pending split request is dropped, and a migrate or cancel request returns it unstarted.
   */
  pipelined?: boolean;
};

export interface RunRequest {
  taskId: string;
  jobId: string;
  ref: TaskRef;
  state: unknown;
  /** The task's result contribution so far (from a checkpoint), or undefined for a fresh task. */
  partial: unknown;
  /** The job's variable board (shared memory), if its task type declares vars. */
  board: SharedArrayBuffer | undefined;
  varNames: string[];
}

/** What a worker reports; every message names the task it concerns. */
export type FromWorker =
  | { type: 'ready' }
  /** A new task was split off (or spawned); `checkpoint` is the parent's state and partial result right after. */
  | { type: 'child'; taskId: string; childState: unknown; checkpoint: { state: unknown; partial: unknown }; on?: string }
  | { type: 'done'; taskId: string; partial: unknown }
  /** An explicit checkpoint of a running task (it keeps running). */
  | { type: 'checkpoint'; taskId: string; state: unknown; partial: unknown }
  /** An application message from a task to its node's job-kind code. */
  | { type: 'app'; taskId: string; body: unknown }
  | { type: 'migrated'; taskId: string; state: unknown; partial: unknown }
  | { type: 'cancelled'; taskId: string }
  | { type: 'failed'; taskId: string; error: string }
  | { type: 'setVar'; jobId: string; name: string; value: unknown };
