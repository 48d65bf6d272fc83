import { randomBytes } from 'node:crypto';
import type { KindRef } from '../kinds/job-kind.js';
import type { TaskFailure } from '../pool/contributions.js';
import type { TaskRef } from '../worker/task.js';
import type { BlobRef } from '../../data/blob-directory.js';
import type { SharedInputForm } from '../worker/shared-input.js';

/** What a job is: its kind, its task type (by module), and how many nodes it wants. */
export interface JobSpec {
  id: string;
  /** The job's kind (default: the built-in task pool). */
  kind?: KindRef;
  /** The task type (task-pool jobs) or the application module a kind runs. */
  ref: TaskRef;
  /** Names of the global variables the task type declares. */
  varNames: string[];
  createdAt: number;
  /** Requested number of nodes. */
  nodes: number;
  /** The job does not start with fewer nodes (default 1); see the scheduler. */
  minNodes?: number;
  /** The job never gets more nodes (default: `nodes`). */
  maxNodes?: number;
  /** The job's shared read-only input (see TaskContext.input), if any. */
  input?: unknown;
  /** A large input lives in the data plane instead: binary ('bytes') or MessagePack ('msgpack'). */
  inputBlob?: { ref: BlobRef; form: SharedInputForm };
  /** Shipped code: the bundle of the task module `ref.module` (a file on the submitter's machine). */
  code?: BlobRef;
  /** The resource manager that places this job's nodes (e.g. 'manager'); the cluster's reconciler leaves it alone. */
  managedBy?: string;
}

/** How a job ended, as stored in its `result` znode. */
export type JobOutcome =
  /**
   * `failures`: tasks that failed for good under the 'collect' failure policy (absent when none did).
   * `valueRef`: a value too large for the coordination service (over 512 KiB encoded) is in the data
   * plane and `value` is undefined in the znode; `JobHandle.result()` fetches it (job-result-blob.ts).
   */
  | { status: 'done'; value: unknown; finishedAt: number; completions: number; failures?: TaskFailure[]; valueRef?: BlobRef }
  | { status: 'failed'; error: string; finishedAt: number }
  | { status: 'cancelled'; finishedAt: number };

export const ROOT_TASK_ID = 'root';

export function newJobId(): string {
  return `j-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
