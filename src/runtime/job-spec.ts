import { randomBytes } from 'node:crypto';
import type { TaskRef } from './task.js';

/** What a job is: its task type (by module), root state, and how many nodes it wants. */
export interface JobSpec {
  id: string;
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
}

/** How a job ended, as stored in its `result` znode. */
export type JobOutcome =
  | { status: 'done'; value: unknown; finishedAt: number; completions: number }
  | { status: 'failed'; error: string; finishedAt: number }
  | { status: 'cancelled'; finishedAt: number };

export const ROOT_TASK_ID = 'root';

export function newJobId(): string {
  return `j-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
