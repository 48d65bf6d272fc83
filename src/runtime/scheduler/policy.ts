import type { ClusterView } from './cluster-view.js';

/**
 * A scheduling policy says how many nodes each job should have; the planner (planner.ts) turns
 * that into moves of concrete nodes. Keeping the two apart lets a layer bring its own policy
 * (equipartition, malleable resizing) without touching how nodes are chosen or how a plan is kept
 * safe.
 *
 * `targets` returns a node count per unfinished job. A job left out keeps what it has. The planner
 * enforces the hard rules whatever the policy says: finished jobs get nothing, no job gets more than
 * its maxNodes, a job that has not started gets nodes only if it can have minNodes at once, only idle
 * nodes are handed out, and a node moves at most once per plan.
 *
 * `V` lets a layer plan over a view whose jobs carry more than JobState (e.g. a resource manager's
 * job kinds and last rescale times); the core reconciler uses the plain ClusterView.
 */
export interface SchedulingPolicy<V extends ClusterView = ClusterView> {
  readonly name: string;
  targets(view: V): Map<string, number>;
}
