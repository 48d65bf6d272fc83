import { fcfsPolicy, type SchedulingPolicy } from '../../../runtime/scheduler/index.js';
import { equipartitionPolicy, type EquipartitionOptions } from './equipartition-policy.js';
import { rigidSize, type ManagedView } from './managed-job.js';

export type PolicyName = 'fcfs' | 'moldable' | 'equipartition';

export const POLICY_NAMES: readonly PolicyName[] = ['fcfs', 'moldable', 'equipartition'];

/**
 * First come, first served for rigid jobs: every job gets exactly its requested size, starts when
 * that many nodes are free, and blocks later jobs until then (the core's strict FCFS over sizes
 * made rigid: min = max = the requested size).
 */
export function rigidFcfsPolicy(): SchedulingPolicy<ManagedView> {
  const core = fcfsPolicy();
  return {
    name: 'fcfs',
    targets(view: ManagedView): Map<string, number> {
      return core.targets({ ...view, jobs: view.jobs.map((j) => ({ ...j, minNodes: rigidSize(j), maxNodes: rigidSize(j), desired: rigidSize(j) })) });
    },
  };
}

/** The manager's policies by name; T_gap and the cost test are equipartition's, backfill is moldable's and equipartition's. */
export function managerPolicy(name: PolicyName, opts: Partial<EquipartitionOptions> = {}): SchedulingPolicy<ManagedView> {
  switch (name) {
    case 'fcfs': return rigidFcfsPolicy();
    case 'moldable': return equipartitionPolicy({ ...opts, tGapMs: Infinity });
    case 'equipartition': return equipartitionPolicy({ ...opts, tGapMs: opts.tGapMs ?? 0 });
  }
}

export function isPolicyName(value: unknown): value is PolicyName {
  return typeof value === 'string' && (POLICY_NAMES as readonly string[]).includes(value);
}
