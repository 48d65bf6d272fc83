/**
 * What the scheduler sees: the live nodes with their assignments and the jobs with their node
 * ranges. Built by the reconciler from the coordination service, or by hand in tests; the planner
 * and policies read it and never do I/O.
 */

export interface NodeState {
  id: string;
  /** The job this node is assigned to; '' when idle. */
  assignment: string;
  /** When the current assignment was written (ms); orders releases, most recent first. */
  assignedAt?: number;
}

export interface JobState {
  id: string;
  createdAt: number;
  /** A job does not start with fewer nodes than this (≥ 1). */
  minNodes: number;
  /** Never more nodes than this (Infinity: no limit). */
  maxNodes: number;
  /** How many nodes the job wants now; clamped to [minNodes, maxNodes]. */
  desired: number;
  /** The job has a result: its nodes go back to the pool. */
  finished: boolean;
  /** The job has had nodes at some point (a started job is topped up, not gated by minNodes). */
  started: boolean;
  /**
   * An external resource manager places this job's nodes (JobSpec.managedBy): policies and the planner
   * neither give it nodes nor take them away (only a finished job's nodes are released).
   */
  external?: boolean;
}

export interface ClusterView {
  now: number;
  nodes: readonly NodeState[];
  jobs: readonly JobState[];
}

/** Move one node: `from` '' → job is an assignment, job → '' a release. */
export interface Decision {
  node: string;
  from: string;
  to: string;
}

export interface JobBounds {
  min: number;
  max: number;
  /** min(desired, max), at least min. */
  want: number;
}

/**
 * A job's node range made sane: min a whole number ≥ 1, max ≥ min, desired clamped into the range.
 * Specs are validated on submission (validateNodeRange); this only keeps a bad stored value from
 * breaking the plan for every other job.
 */
export function jobBounds(job: JobState): JobBounds {
  const min = Number.isInteger(job.minNodes) && job.minNodes >= 0 ? job.minNodes : 1;
  const max = job.maxNodes >= min ? Math.floor(job.maxNodes) : min; // NaN fails the test and becomes min
  const desired = Number.isFinite(job.desired) ? Math.floor(job.desired) : min;
  return { min, max, want: Math.min(Math.max(desired, min), max) };
}

/** First come, first served: by creation time, then id (so equal times still give one order). */
export function fcfsOrder<J extends Pick<JobState, 'id' | 'createdAt'>>(jobs: readonly J[]): J[] {
  return [...jobs].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Number of nodes assigned to each job. */
export function assignedCounts(view: ClusterView): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of view.nodes) if (n.assignment !== '') counts.set(n.assignment, (counts.get(n.assignment) ?? 0) + 1);
  return counts;
}

/**
 * Checks a job's node range as given on submission; throws a message naming the problem.
 * `nodes` is the requested size (JobSpec.nodes), which must lie in the range.
 */
export function validateNodeRange(range: { minNodes?: number; maxNodes?: number; nodes?: number }): void {
  const { minNodes, maxNodes, nodes } = range;
  if (minNodes !== undefined && (!Number.isInteger(minNodes) || minNodes < 0)) throw new Error(`minNodes must be a whole number ≥ 0, got ${minNodes}`);
  if (maxNodes !== undefined && !(maxNodes === Infinity || (Number.isInteger(maxNodes) && maxNodes >= 1))) throw new Error(`maxNodes must be a whole number ≥ 1 or Infinity, got ${maxNodes}`);
  const min = minNodes ?? 1;
  const max = maxNodes ?? Infinity;
  if (min > max) throw new Error(`minNodes (${min}) exceeds maxNodes (${max})`);
  if (nodes !== undefined && (nodes < min || nodes > max)) throw new Error(`nodes (${nodes}) must lie between minNodes (${min}) and maxNodes (${max})`);
}
