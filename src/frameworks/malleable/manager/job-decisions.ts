import { type Decision, plan, type SchedulingPolicy } from '../../../runtime/scheduler/index.js';
import type { ManagedView } from './managed-job.js';

/** A scheduling decision about one job (Algorithm 1's jobDecisions), with the concrete nodes. */
export type JobDecision =
  /** Start the job on `nodes`. */
  | { type: 'launch'; job: string; nodes: string[] }
  /** Grow the job to `nodes` (its whole new set); `added` must be free first. */
  | { type: 'expand'; job: string; nodes: string[]; added: string[] }
  /** Shrink the job to `nodes`; `removed` are free once the job acknowledges. */
  | { type: 'shrink'; job: string; nodes: string[]; removed: string[] };

/**
 * ScheduleJobs + ScheduleNodes: the policy's targets, made into node moves by the core planner, and
 * grouped per job (nodes of finished jobs count as idle). The targets are computed once; the plan is repeated on the scheduler's view until
 * it is stable, because the planner hands out only nodes idle in the view it is given — a node that
 * one job gives up is handed to another in the next round (and the executor makes that launch wait
 * for the shrink's acknowledgement).
 */
export function decideJobs(view: ManagedView, policy: SchedulingPolicy<ManagedView>): JobDecision[] {
  const finished = new Set(view.jobs.filter((j) => j.finished).map((j) => j.id));
  let nodes = view.nodes.map((n) => (finished.has(n.assignment) ? { id: n.id, assignment: '' } : n));
  const targets = policy.targets({ ...view, nodes });
  const fixed: SchedulingPolicy<ManagedView> = { name: policy.name, targets: () => targets };
  const before = holdings(nodes.map((n) => [n.id, n.assignment]));
  for (let round = 0; round < 4; round++) {
    const moves: Decision[] = plan({ ...view, nodes }, fixed);
    if (moves.length === 0) break;
    const byNode = new Map(moves.map((d) => [d.node, d.to]));
    nodes = nodes.map((n) => (byNode.has(n.id) ? { id: n.id, assignment: byNode.get(n.id)!, assignedAt: view.now } : n));
  }
  const after = holdings(nodes.map((n) => [n.id, n.assignment]));
  const decisions: JobDecision[] = [];
  for (const job of view.jobs) {
    const had = before.get(job.id) ?? [];
    const has = after.get(job.id) ?? [];
    const added = has.filter((n) => !had.includes(n));
    const removed = had.filter((n) => !has.includes(n));
    if (removed.length > 0) decisions.push({ type: 'shrink', job: job.id, nodes: has, removed });
    else if (added.length > 0) decisions.push(had.length === 0 ? { type: 'launch', job: job.id, nodes: has } : { type: 'expand', job: job.id, nodes: has, added });
  }
  // Shrinks first: they are only sent, and what they free is what the others wait for.
  return [...decisions.filter((d) => d.type === 'shrink'), ...decisions.filter((d) => d.type !== 'shrink')];
}

/** Job → its nodes (sorted), from node → job pairs ('' is idle). */
export function holdings(pairs: Iterable<readonly [string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [node, job] of pairs) if (job !== '') out.set(job, [...(out.get(job) ?? []), node]);
  for (const list of out.values()) list.sort();
  return out;
}
