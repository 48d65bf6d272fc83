/**
 * The scheduler's exported API: what code outside the runtime (resource managers, their policies,
 * the CLI, the package entry) may use. Everything else in this folder is the scheduler's own.
 *
 * - the cluster as a policy sees it, and policies: ClusterView, SchedulingPolicy, fcfsPolicy, plan;
 * - intent: setDesiredSize, scaleJob, assignNamedNode, drainNode;
 * - moves decided elsewhere (a resource manager's): moveNodes, fenced by the scheduler's epoch;
 * - the nodes and their assignments: listNodes;
 * - the reconcile loop itself: Reconciler.
 */
export { assignedCounts, fcfsOrder, jobBounds, validateNodeRange, type ClusterView, type Decision, type JobBounds, type JobState, type NodeState } from './cluster-view.js';
export type { SchedulingPolicy } from './policy.js';
export { applyDecisions, plan } from './planner.js';
export { fcfsPolicy, type FcfsOptions } from './fcfs-policy.js';
export { assignNamedNode, drainNode, scaleJob, setDesiredSize } from './job-sizing.js';
export { moveNodes, type NodeMove } from './node-moves.js';
export { listNodes, type NodeInfo } from './node-list.js';
export { Reconciler, type ReconcilerOptions, type ReconcilerStats } from './reconciler.js';
