import { assignedCounts, jobBounds, type ClusterView, type Decision } from '../scheduler/cluster-view.js';
import { applyDecisions } from '../scheduler/planner.js';
import type { ProvisionedNode } from './node-provider.js';

/**
 * How many machines to ask a provider for, and which of its idle ones to give back — from what the
 * scheduler sees and plans. Pure (no I/O, no clock), tested by hand-computed cases.
 *
 * After the scheduler's plan is applied, each unfinished job placed by the scheduler (not by an
 * external resource manager) lacks min(desired, maxNodes) − assigned nodes (a job that has not
 * started wants at least minNodes at once). Nodes still idle after the plan will be handed out, and
 * nodes the provider is starting will be idle soon: the rest is asked for, up to the provider's
 * `maxNodes` (every node it holds counts, releasing ones included), and not before `startAllowedAt`
 * (a backoff after failed starts). A provided node idle for `idleMs` or more is released while no
 * job lacks nodes, keeping `minNodes` of them.
 */
export interface ScaleOptions {
  /** At most this many nodes from the provider at once. */
  maxNodes: number;
  /** Keep at least this many provided nodes, idle or not (default 0). */
  minNodes?: number;
  /** Release a provided node idle for this long (ms). */
  idleMs: number;
}

export interface ScaleDecision {
  provision: number;
  release: string[];
  /** Nodes the jobs lack after the plan, before counting idle and starting nodes (for reports). */
  lacking: number;
}

export function scaleDecision(view: ClusterView, decisions: readonly Decision[], provided: readonly ProvisionedNode[], now: number, startAllowedAt: number, opts: ScaleOptions): ScaleDecision {
  const after = applyDecisions(view, decisions);
  const counts = assignedCounts(after);
  let lacking = 0;
  for (const job of after.jobs) {
    if (job.finished || job.external) continue;
    const { want } = jobBounds(job);
    lacking += Math.max(0, want - (counts.get(job.id) ?? 0));
  }
  const idle = after.nodes.filter((n) => n.assignment === '');
  const starting = provided.filter((n) => n.state === 'requested' || n.state === 'starting').length;
  const holding = provided.filter((n) => n.state === 'requested' || n.state === 'starting' || n.state === 'joined' || n.state === 'releasing').length;
  const room = Math.max(0, Math.floor(opts.maxNodes) - holding);
  const need = lacking - idle.length - starting;
  const provision = need > 0 && now >= startAllowedAt ? Math.min(need, room) : 0;

  const release: string[] = [];
  if (lacking === 0) {
    const idleAfter = new Set(idle.map((n) => n.id));
    const joined = provided.filter((n) => n.state === 'joined').length;
    const keep = Math.max(0, opts.minNodes ?? 0);
    const candidates = provided
      .filter((n) => n.state === 'joined' && n.idleSince !== undefined && now - n.idleSince >= opts.idleMs && idleAfter.has(n.id))
      .sort((a, b) => a.idleSince! - b.idleSince! || (a.id < b.id ? -1 : 1));
    for (const n of candidates) {
      if (joined - release.length <= keep) break;
      release.push(n.id);
    }
  }
  return { provision, release, lacking };
}

/** When the next provided node becomes idle long enough to release (undefined: none will). */
export function nextIdleExpiry(provided: readonly ProvisionedNode[], idleMs: number): number | undefined {
  let next: number | undefined;
  for (const n of provided) {
    if (n.state !== 'joined' || n.idleSince === undefined) continue;
    const at = n.idleSince + idleMs;
    if (next === undefined || at < next) next = at;
  }
  return next;
}
