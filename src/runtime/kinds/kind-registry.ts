import type { JobKind, KindRef } from './job-kind.js';
import { TASK_POOL_KIND, taskPoolKind } from '../pool/task-pool-kind.js';

/**
 * The kinds that ship with tidepool, by their `builtin:` names. A job names them so, not by a file
 * URL, so that every node runs its own copy: a submitter's install may be elsewhere, on another
 * machine, or another build, and a second copy of tidepool's modules in a node mixes its classes
 * with the node's (errors of one copy's coordination client are not the other's). The frameworks
 * load on first use.
 */
const BUILTIN: Record<string, () => Promise<unknown>> = {
  [TASK_POOL_KIND.module]: () => Promise.resolve({ default: taskPoolKind }),
  'builtin:iterative': () => import('../../frameworks/iterative/iterative-kind.js'),
  'builtin:malleable': () => import('../../frameworks/malleable/malleable-kind.js'),
  'builtin:workflow': () => import('../../frameworks/workflow/workflow-kind.js'),
};

/** Loads a job kind by reference (built-in kinds by name, others from their module, cached by import()). */
export async function loadJobKind(ref: KindRef | undefined): Promise<JobKind> {
  if (ref === undefined) return taskPoolKind;
  let mod: Record<string, unknown>;
  if (ref.module.startsWith('builtin:')) {
    const load = BUILTIN[ref.module];
    if (!load) throw new Error(`unknown built-in job kind "${ref.module}" (known: ${Object.keys(BUILTIN).join(', ')})`);
    mod = (await load()) as Record<string, unknown>;
  } else {
    mod = (await import(ref.module)) as Record<string, unknown>;
  }
  const value = mod[ref.export];
  if (!value || (value as { kind?: unknown }).kind !== 'tidepool.job-kind') {
    throw new Error(`${ref.module} has no job kind export "${ref.export}" (export the result of defineJobKind)`);
  }
  return value as JobKind;
}
