/** Where a batch runs: this machine's worker threads, or a tidepool service. */
import type { TaskOutcome } from './graph-format.js';
import type { SandboxLimits } from './sandbox-pool.js';

/** The cost breakdown of one batch (seed 002 Table 1), in milliseconds. */
export interface BatchCosts {
  /** Client: capture and encoding. */
  serializationMs: number;
  /** Client ↔ service: request round trips less the time the service spent on them. */
  transferMs: number;
  /** Service: turning the batch into a job on its cluster until the job was accepted. */
  dispatchMs: number;
  /** Cluster: wall time from the job's start to its result. */
  executionMs: number;
  /** Sandboxes' comparison of state after each task with its snapshot, summed, plus applying on the client. */
  diffingMs: number;
  /** Σ of the tasks' own execution times in the sandboxes. */
  taskMs: number;
  /** HTTP requests the batch took (one to start it, one per long poll until it was done; 0 locally). */
  roundTrips: number;
  /** Bytes of the request that started the batch, and of the answer that ended it. */
  requestBytes: number;
  responseBytes: number;
}

export interface BatchRun {
  /** Each task's outcome, by task index. */
  outcomes(): Promise<{ outcomes: TaskOutcome[]; costs: Partial<BatchCosts> }>;
  cancel(): Promise<void>;
}

export interface BatchExecutor {
  /** Whether the executor supplies this version of a package itself (then it travels by reference). */
  hasPackage?(name: string, version: string): boolean;
  /**
   * Starts a captured batch (one round trip for a remote service). `client`: what the client measured
   * before sending, which a service shows with the batch's costs on its cluster's dashboard.
   */
  start(graphJson: string, taskCount: number, limits?: SandboxLimits, client?: { serializationMs: number }): Promise<BatchRun>;
  close(): Promise<void>;
}
