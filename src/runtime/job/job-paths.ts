import { joinPath } from '../../coord/paths.js';

/** Where a cluster keeps its state in the coordination service. */
export const DEFAULT_ROOT = '/tidepool';

export function clusterPaths(root = DEFAULT_ROOT) {
  return {
    root,
    nodes: joinPath(root, 'nodes'),
    assignments: joinPath(root, 'assign'),
    jobs: joinPath(root, 'jobs'),
    stats: joinPath(root, 'stats'),
  };
}

/**
 * A job's znodes: spec, members, election, vars, result, control channel, tallies. A kind keeps its
 * own under `base` (the task pool its ledger: pool/task-pool-spec.ts).
 */
export function jobPaths(jobId: string, root = DEFAULT_ROOT) {
  const base = joinPath(root, 'jobs', jobId);
  return {
    id: jobId,
    base,
    spec: joinPath(base, 'spec'),
    members: joinPath(base, 'members'),
    election: joinPath(base, 'election'),
    vars: joinPath(base, 'vars'),
    result: joinPath(base, 'result'),
    /** Requests to the running job and their acknowledgements (control-channel recipe). */
    control: joinPath(base, 'control'),
    /** Each node's counters when it left the job (tallies.ts). */
    tallies: joinPath(base, 'tallies'),
  };
}

export type JobPaths = ReturnType<typeof jobPaths>;
