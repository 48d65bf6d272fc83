/** Where a batch runs: this machine's worker threads, or a tidepool service. */
import type { CaptureGraph, TaskOutcome } from './graph-format.js';
import type { SandboxLimits } from './sandbox-pool.js';

/** The cost breakdown of one batch (seed 002 Table 1), in milliseconds. */
export interface BatchCosts {
  /** Client: capture and encoding. */
  serializationMs: number;
  /** Client ↔ service: request round trips less the time the service spent on them. */
  transferMs: number;
  /** Service: turning the batch into work on its cluster until the cluster had it. */
  dispatchMs: number;
  /** Cluster: wall time from the batch's start on the cluster to its last outcome. */
  executionMs: number;
  /** Sandboxes' comparison of state after each task with its snapshot, summed, plus applying on the client. */
  diffingMs: number;
  /** Σ of the tasks' own execution times in the sandboxes. */
  taskMs: number;
  /** From `start` until the first task's outcome was applied here (results stream in as tasks finish). */
  firstOutcomeMs: number;
  /** HTTP requests the batch took (one to start it, one that streamed its outcomes, more on a retry; 0 locally). */
  roundTrips: number;
  /** Bytes of the request that started the batch (after compression), and of its outcomes as they came. */
  requestBytes: number;
  responseBytes: number;
}

/** A batch as it goes to an executor: its graph, and the bytes of every blob the graph names. */
export interface EncodedBatch {
  graph: CaptureGraph;
  blobs: ReadonlyMap<string, Uint8Array>;
}

/** Outcomes that arrived together: `[task index, outcome]`. */
export type Arrival = [index: number, outcome: TaskOutcome];

export interface BatchRun {
  /**
   * Outcomes as they arrive, in groups. Ends once every task that was not cancelled has one. An index
   * may come twice (a task run again after its node failed): the first counts.
   */
  readonly arrivals: AsyncIterable<Arrival[]>;
  /** Stops the tasks of these indexes that have not finished (their outcomes need not come). */
  cancel(indexes: readonly number[]): Promise<void>;
  /** The executor's side of the cost breakdown, complete once `arrivals` has ended. */
  costs(): Partial<BatchCosts>;
  /** Hands the client's side of the costs to a service (its dashboard shows them), once the batch is over. */
  report?(client: { serializationMs: number; transferMs: number }): void;
}

/** Blobs a connection sent, and those it did not need to send because the other side had them (the capture cache). */
export interface TransferStats {
  /** Blobs a batch named that the other side already held: sent by hash only. */
  blobHits: number;
  /** Blobs sent with their bytes. */
  blobMisses: number;
  uploadedBytes: number;
}

export interface BatchExecutor {
  /** Whether the executor supplies this version of a package itself (then it travels by reference). */
  hasPackage?(name: string, version: string): boolean;
  /**
   * Starts a captured batch (one round trip for a remote service). `client`: what the client measured
   * before sending, which a service shows with the batch's costs on its cluster's dashboard.
   */
  start(batch: EncodedBatch, limits?: SandboxLimits, client?: { serializationMs: number }): Promise<BatchRun>;
  /** Sends blobs now (`distribution.put`): later batches name them by hash only. */
  upload(blobs: ReadonlyMap<string, Uint8Array>): Promise<void>;
  readonly transfers: TransferStats;
  close(): Promise<void>;
}
