import type { JobKind, KindRef } from './job-kind.js';
import { TASK_POOL_KIND, taskPoolKind } from './task-pool-kind.js';

const BUILTIN: Record<string, JobKind> = { [TASK_POOL_KIND.module]: taskPoolKind };

/** Loads a job kind by reference (built-in kinds by name, others from their module, cached by import()). */
export async function loadJobKind(ref: KindRef | undefined): Promise<JobKind> {
  if (ref === undefined) return taskPoolKind;
  const builtin = BUILTIN[ref.module];
  if (builtin) return builtin;
  const mod = (await import(ref.module)) as Record<string, unknown>;
  const value = mod[ref.export];
  if (!value || (value as { kind?: unknown }).kind !== 'tidepool.job-kind') {
    throw new Error(`${ref.module} has no job kind export "${ref.export}" (export the result of defineJobKind)`);
  }
  return value as JobKind;
}
