/**
 * How a job names the task pool, and a task-pool job as a submitter writes it. Importing this module
 * registers the kind (see kinds/kind-registry.ts): whoever builds a task-pool job can run one.
 */
import { registerJobKind } from '../kinds/kind-registry.js';
import type { KindRef } from '../job/job-spec.js';
import type { TaskRef } from '../worker/task.js';
import type { TaskPoolSubmission } from './task-pool-spec.js';

/** The reference a job spec carries for the task pool (built in: every node runs its own copy). */
export const TASK_POOL_KIND: KindRef = { module: 'builtin:task-pool', export: 'taskPoolKind' };

registerJobKind(TASK_POOL_KIND.module, () => import('./task-pool-kind.js'));

/**
 * The kind and kind spec of a job that runs task type `ref` from root state `root`: the task pool's,
 * or those of a kind built on it (`kind`, which takes the same spec), for `submitJob`. `poolMemoryBytes`:
 * the job's memory budget for the tasks one node holds (pool-budget.ts).
 */
export function taskPoolJob(ref: TaskRef, root: unknown, kind: KindRef = TASK_POOL_KIND, opts: { poolMemoryBytes?: number } = {}): { kind: KindRef; kindSpec: TaskPoolSubmission; label: string } {
  return { kind, kindSpec: { ref, root, ...(opts.poolMemoryBytes !== undefined ? { poolMemoryBytes: opts.poolMemoryBytes } : {}) }, label: ref.module };
}
