import type { MessagePort } from 'node:worker_threads';
import type { TaskRef } from './task.js';
import type { EncodedRecords } from './task-record.js';
import type { SharedInputForm } from './shared-input.js';

/** What the node asks of a worker. */
export type ToWorker =
  /** What every task of a job shares, sent once per worker and job (per-task messages stay small). */
  | { type: 'job'; job: JobSetup }
  /** Tasks of one job to run in order, one dispatch (several when tasks are short: one message instead of one per task). */
  | { type: 'runs'; runs: TaskBatch }
  /** A pipelined task this worker has not started must not run (its ownership was lost): report it cancelled. */
  | { type: 'drop'; taskId: string }
  /** An application message from the node's job-kind code to the task running here (TaskContext.receive). */
  | { type: 'app'; body: unknown }
  /** Starts a resident on this thread: `export` of `module` is called with (`port`, `data`); see Workers.attach. */
  | { type: 'attach'; module: string; export: string; port: MessagePort; data: unknown }
  /** Is this thread alive? Answered by `pong` (the pool sends a resident only to a thread that answered). */
  | { type: 'ping' }
  | { type: 'shutdown' };

/** What a thread posts on a resident's port when the resident could not start (then it closes the port). */
export interface AttachFailed {
  type: 'attach-failed';
  error: string;
}

/** Job setups a worker keeps (oldest dropped first); the pool mirrors the same order to know what a worker holds. */
export const JOB_SETUPS_KEPT = 4;

export interface JobSetup {
  jobId: string;
  ref: TaskRef;
  /** The job's input: a value (structured clone), or shared bytes (no copy; see shared-input.ts). */
  input?: { value: unknown } | { shared: Uint8Array; form: SharedInputForm };
  board: SharedArrayBuffer | undefined;
  varNames: string[];
  /** The node's id: its tasks' spawned children go to it as encoded ledger records (see RunRequest.owner). */
  owner?: string;
  /** See RunRequest.spawnWindow. */
  spawnWindow?: number;
}

/** The per-task part of a run request, as it crosses the thread boundary. */
export type TaskMessage = Pick<RunRequest, 'taskId' | 'jobId' | 'state' | 'partial' | 'encoded'> & {
  /**
   * Sent while the worker still ran another task (short tasks are pipelined so the worker never
   * waits for the node): the control word may still carry requests meant for that task, so at its
   * start a pending split request is dropped, and a migrate or cancel request returns it unstarted.
   */
  pipelined?: boolean;
  /** Another task of the same dispatch follows: this one's completion may wait to be reported with the next ones. */
  more?: boolean;
};

/**
 * A dispatch as it crosses the thread boundary: column by column, so that the per-task part is only
 * the id and the state (a third of the cloning, for small states). Every task but the first starts
 * behind another (pipelined); `pipelined` says whether the first does too; `partials` is absent when
 * no task has a partial result yet.
 */
export interface TaskBatch {
  jobId: string;
  ids: string[];
  states: unknown[];
  partials?: unknown[];
  /**
   * Tasks whose state travels as their encoded ledger record (their `states` entry is then undefined): task i's
   * record is `spans[3i + 1]` bytes on from `spans[3i + 2]`... see EncodedSpans. Numbers and a few whole buffers
   * clone far faster than a view per task.
   */
  encoded?: EncodedSpans;
  pipelined: boolean;
}

/** Records as spans of a few buffers: task i's is `buffers[spans[3i]]` from byte `spans[3i + 1]`, `spans[3i + 2]` bytes (-1: none). */
export interface EncodedSpans {
  buffers: ArrayBufferLike[];
  spans: number[];
}

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
  /**
   * The id of the node that owns the task, when that node takes spawned children as their encoded first
   * ledger records (`encoded-children`, `done.encodedChildren`): the worker encodes them, not the node's thread.
   */
  owner?: string;
  /** The state as an encoded ledger record (a spawned child never decoded on the node); `state` is then unused. */
  encoded?: Uint8Array;
  /**
   * Flow control of spawn reports (`child`, `children`, `encoded-children`): at most this many of the slot's
   * are unrecorded at once; the worker waits for room before it sends another, and the node acknowledges each
   * one it recorded or dropped (Workers.spawnsRecorded). Unset: no window (the node does not acknowledge).
   */
  spawnWindow?: number;
}

/** What a worker reports; every message names the task it concerns. */
export type FromWorker =
  | { type: 'ready' }
  /** A new task was split off (or spawned); `checkpoint` is the parent's state and partial result right after. */
  | { type: 'child'; taskId: string; childState: unknown; checkpoint: { state: unknown; partial: unknown }; on?: string }
  /** Tasks spawned together (a batch, in spawn order); `checkpoint` is the parent's state and partial result right after the last. */
  | { type: 'children'; taskId: string; states: unknown[]; checkpoint: { state: unknown; partial: unknown } }
  /** The same, for a task with an `owner`: the children as their encoded first ledger records. */
  | { type: 'encoded-children'; taskId: string; records: EncodedRecords; checkpoint: { state: unknown; partial: unknown } }
  /**
   * Completed; `children` were spawned since the task's last report and not run (recorded with its completion);
   * `inline`: how many of its spawned children (and theirs) ran inline after it, and their contributions folded
   * into one; `ms`: how long it all ran; `encodedChildren`: `children` as encoded records (a task with an `owner`).
   */
  | { type: 'done'; taskId: string; partial: unknown; children?: unknown[]; encodedChildren?: EncodedRecords; inline?: InlineRuns; ms?: number }
  /** An explicit checkpoint of a running task (it keeps running). */
  | { type: 'checkpoint'; taskId: string; state: unknown; partial: unknown }
  /** An application message from a task to its node's job-kind code. */
  | { type: 'app'; taskId: string; body: unknown }
  | { type: 'migrated'; taskId: string; state: unknown; partial: unknown }
  | { type: 'cancelled'; taskId: string }
  | { type: 'failed'; taskId: string; error: string }
  /** A global-variable proposal of task `taskId` (held, like its other reports, while the task's claim is pending). */
  | { type: 'setVar'; jobId: string; taskId: string; name: string; value: unknown };

/** Spawned tasks a worker ran inline after their parent: how many, and their contributions folded into one. */
export interface InlineRuns {
  tasks: number;
  value: unknown;
}

/** What a worker thread posts: one report, or several at once (completions of one dispatch, in order), or `pong` (alive: Workers.attach). */
export type WorkerPost = FromWorker | { type: 'batch'; events: FromWorker[] } | DoneColumns | { type: 'pong' };

/**
 * Plain completions of a dispatch (no children), column by column: ids, partial results, run times, and
 * the inline runs where any (undefined elsewhere). Arrays of strings and numbers cross the thread boundary
 * far faster than as many small objects.
 */
export interface DoneColumns {
  type: 'dones';
  taskIds: string[];
  partials: unknown[];
  ms: number[];
  inline?: Array<InlineRuns | undefined>;
}
