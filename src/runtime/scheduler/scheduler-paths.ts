import { joinPath } from '../../coord/paths.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import type { JobSpec } from '../job/job-spec.js';

/**
 * The scheduler's znodes: per job the desired size (`size`, utf8 integer) and a `started` marker
 * (the job has had nodes, so it is topped up rather than gated by minNodes, even after a failover of
 * the reconciler); per cluster the `scheduler` epoch, whose version every plan's commit bumps, so two
 * reconcilers never both apply plans made from the same state.
 */
export function schedulerPaths(root?: string) {
  const cluster = clusterPaths(root);
  return {
    ...cluster,
    epoch: joinPath(cluster.root, 'scheduler'),
    size: (jobId: string) => joinPath(jobPaths(jobId, root).base, 'size'),
    started: (jobId: string) => joinPath(jobPaths(jobId, root).base, 'started'),
  };
}

export type SchedulerPaths = ReturnType<typeof schedulerPaths>;

/** A spec's node range: missing max is no limit (a job may be scaled beyond its first size). */
export function nodeRangeOf(spec: Pick<JobSpec, 'nodes'>): { minNodes: number; maxNodes: number } {
  return { minNodes: spec.nodes.min, maxNodes: spec.nodes.max ?? Infinity };
}

/** The desired size stored in `size`, or null when the data is not a whole number ≥ 0. */
export function parseSize(data: Uint8Array): number | null {
  const text = Buffer.from(data).toString('utf8').trim();
  return /^\d+$/.test(text) ? Number(text) : null;
}
