/**
 * A task-pool job's part of the job spec, and of the job's znodes: its ledger (seed 000's
 * termination list, each entry a task's record) under `<job>/termination`.
 */
import { joinPath } from '../../coord/paths.js';
import type { JobPaths } from '../job/job-paths.js';
import type { TaskRef } from '../worker/task.js';

/** What the submitter gives: the task type and the root task's state. */
export interface TaskPoolSubmission {
  ref: TaskRef;
  root: unknown;
  /** The job's memory budget for the tasks one node holds (bytes; pool-budget.ts): none by default. */
  poolMemoryBytes?: number;
}

/** What nodes read (the root task's state is in the ledger, not in the spec). */
export interface TaskPoolSpec {
  ref: TaskRef;
  /** Names of the global variables the task type declares. */
  varNames: string[];
  /** The job's memory budget for the tasks one node holds (bytes), if it has one. */
  poolMemoryBytes?: number;
}

export const ROOT_TASK_ID = 'root';

/** The ledger's znodes: the termination list (`tasks/`, one record per live task) and its transaction markers (`txns/`). */
export function ledgerPaths(job: JobPaths) {
  const termination = joinPath(job.base, 'termination');
  return { termination, tasks: joinPath(termination, 'tasks'), txns: joinPath(termination, 'txns') };
}

export type LedgerZnodes = ReturnType<typeof ledgerPaths>;
