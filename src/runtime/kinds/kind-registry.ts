import type { KindRef } from '../job/job-spec.js';
import type { JobKind } from './job-kind.js';

/**
 * The kinds that ship with tidepool, by their `builtin:` names, filled by whoever knows them: the
 * task pool registers itself where its jobs are built (pool/task-pool-ref.ts), each framework with
 * its kind's reference, and src/frameworks/builtin-kinds.ts loads them all for a process that runs
 * jobs of any kind (`tidepool node`, the package entry). A job names a built-in kind so, not by a file
 * URL, so that every node runs its own copy: a submitter's install may be elsewhere, on another
 * machine, or another build, and a second copy of tidepool's modules in a node mixes its classes with
 * the node's (errors of one copy's coordination client are not the other's). A kind's module loads
 * on first use.
 */
const BUILTIN = new Map<string, () => Promise<unknown>>();

/** Makes the built-in kind `module` (a `builtin:` name) loadable; `load` resolves with its module. */
export function registerJobKind(module: string, load: () => Promise<unknown>): void {
  if (!module.startsWith('builtin:')) throw new Error(`a registered job kind has a "builtin:" name, got "${module}"`);
  BUILTIN.set(module, load);
}

/** Loads a job kind by reference (built-in kinds by name, others from their module, cached by import()). */
export async function loadJobKind(ref: KindRef): Promise<JobKind> {
  let mod: Record<string, unknown>;
  if (ref.module.startsWith('builtin:')) {
    const load = BUILTIN.get(ref.module);
    if (!load) {
      throw new Error(`unknown built-in job kind "${ref.module}" (this process knows ${[...BUILTIN.keys()].sort().join(', ') || 'none'}; ` +
        'a process that runs jobs of any kind imports src/frameworks/builtin-kinds.ts, as the CLI and the package entry do)');
    }
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
