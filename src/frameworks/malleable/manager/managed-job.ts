import type { ClusterView, JobState } from '../../../runtime/scheduler/index.js';

/**
 * Who may change a job's node count, and when (the seed's taxonomy, Table I):
 * - rigid: the user fixes the size at submission; it never changes;
 * - moldable: the scheduler picks a size in [min, max] at launch; it never changes afterwards;
 * - malleable: the scheduler may shrink or expand it while it runs (a `rescale` request).
 */
export type Flexibility = 'rigid' | 'moldable' | 'malleable';

export const FLEXIBILITIES: readonly Flexibility[] = ['rigid', 'moldable', 'malleable'];

/** A job as the resource manager sees it: the core's JobState plus what its policies need. */
export interface ManagedJob extends JobState {
  flexibility: Flexibility;
  /** When the job was last launched, shrunk or expanded (ms); T_gap counts from here. */
  lastChangeAt?: number;
  /** A launch or rescale of this job is under way (sent, or waiting for nodes): plan nothing new for it. */
  busy?: boolean;
  /** The job's T_rescale as measured so far (its own, else the pool's), ms; undefined before any rescale. */
  tRescaleMs?: number;
  /** An operator fixed the job's size (its min and max are that size) until released: no T_gap, no cost test. */
  pinned?: boolean;
}

export interface ManagedView extends ClusterView {
  jobs: readonly ManagedJob[];
}

/** The node count a rigid job needs: its requested size (min = max = desired). */
export function rigidSize(job: ManagedJob): number {
  return Math.max(1, Math.floor(Number.isFinite(job.desired) ? job.desired : job.minNodes));
}

export function isFlexibility(value: unknown): value is Flexibility {
  return typeof value === 'string' && (FLEXIBILITIES as readonly string[]).includes(value);
}
