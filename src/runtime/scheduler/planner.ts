import { fcfsOrder, jobBounds, type ClusterView, type Decision, type NodeState } from './cluster-view.js';
import type { SchedulingPolicy } from './policy.js';

/**
 * The scheduling mechanism: turns a policy's per-job targets into node moves. Pure (no I/O, no
 * clock), so it is tested by hand-computed cases and a randomized simulation.
 *
 * Rules kept whatever the policy returns:
 * - nodes of finished or unknown jobs are released;
 * - a job above its target releases the surplus, most recently assigned first (the oldest members
 *   hold the job's leader and most of its state);
 * - a job below its target gets idle nodes (lowest id first), never above maxNodes; a job that has
 *   not started gets them only if it can have minNodes at once;
 * - only nodes idle in the view are assigned, and every node appears in at most one decision;
 * - an external job (placed by a resource manager) is left as it is, whatever the policy says.
 */
export function plan<V extends ClusterView>(view: V, policy: SchedulingPolicy<V>): Decision[] {
  const jobs = new Map(view.jobs.map((j) => [j.id, j]));
  const decisions: Decision[] = [];
  const byJob = new Map<string, NodeState[]>();
  const idle: NodeState[] = [];
  const seen = new Set<string>();
  for (const node of [...view.nodes].sort((a, b) => compareIds(a.id, b.id))) {
    if (seen.has(node.id)) throw new Error(`node ${node.id} appears twice in the cluster view`);
    seen.add(node.id);
    const job = node.assignment === '' ? undefined : jobs.get(node.assignment);
    if (node.assignment === '') idle.push(node);
    else if (!job || job.finished) decisions.push({ node: node.id, from: node.assignment, to: '' });
    else byJob.set(job.id, [...(byJob.get(job.id) ?? []), node]);
  }

  const targets = policy.targets(view);
  for (const job of fcfsOrder(view.jobs.filter((j) => !j.finished && !j.external))) {
    const asked = targets.get(job.id);
    if (asked === undefined) continue; // the policy leaves this job as it is
    const { min, max } = jobBounds(job);
    const members = byJob.get(job.id) ?? [];
    const target = Math.min(Math.max(0, Number.isFinite(asked) ? Math.floor(asked) : 0), max);
    if (target < members.length) {
      const newestFirst = [...members].sort((a, b) => (b.assignedAt ?? -Infinity) - (a.assignedAt ?? -Infinity) || compareIds(b.id, a.id));
      for (const n of newestFirst.slice(0, members.length - target)) decisions.push({ node: n.id, from: job.id, to: '' });
      continue;
    }
    const started = job.started || members.length > 0;
    let give = Math.min(target - members.length, idle.length);
    if (!started && (give < min || target < min)) give = 0; // all of minNodes at once, or not yet
    for (const n of idle.splice(0, give)) decisions.push({ node: n.id, from: '', to: job.id });
  }
  return decisions;
}

/** Applies decisions to a view (what the cluster looks like once they are written). */
export function applyDecisions(view: ClusterView, decisions: readonly Decision[], now = view.now): ClusterView {
  const moves = new Map(decisions.map((d) => [d.node, d]));
  const startedNow = new Set(decisions.filter((d) => d.to !== '').map((d) => d.to));
  return {
    now,
    nodes: view.nodes.map((n) => {
      const d = moves.get(n.id);
      return d ? { id: n.id, assignment: d.to, assignedAt: now } : n;
    }),
    jobs: view.jobs.map((j) => (startedNow.has(j.id) && !j.started ? { ...j, started: true } : j)),
  };
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
