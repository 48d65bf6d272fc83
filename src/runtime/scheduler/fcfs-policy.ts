import { assignedCounts, fcfsOrder, jobBounds, type ClusterView } from './cluster-view.js';
import type { SchedulingPolicy } from './policy.js';

export interface FcfsOptions {
  /**
   * Let a later waiting job start when it fits and an earlier one does not (default false).
   * Without it the queue is strict: a waiting job at the head blocks every later waiting job, so a
   * large job is never starved by a stream of small ones — at the price of idle nodes while it waits.
   */
  backfill?: boolean;
}

/**
 * First come, first served. Jobs are visited in (createdAt, id) order, handing out the idle nodes:
 * - a running job is topped up to min(desired, maxNodes) (this is how a crashed node is replaced),
 *   and above that it is cut back (surplus released);
 * - a waiting job starts only when at least minNodes idle nodes can go to it at once, and then gets
 *   up to its wanted size; one that cannot start blocks later waiting jobs unless `backfill` is set.
 *   Running jobs are never blocked: a replacement is not a new start.
 * Nodes released in this plan are not counted as idle: they drain first and are handed out in the
 * next plan, so a starting job never counts on nodes it cannot get at once.
 */
export function fcfsPolicy(opts: FcfsOptions = {}): SchedulingPolicy {
  return {
    name: opts.backfill ? 'fcfs+backfill' : 'fcfs',
    targets(view: ClusterView): Map<string, number> {
      const counts = assignedCounts(view);
      let idle = view.nodes.filter((n) => n.assignment === '').length;
      let blocked = false;
      const targets = new Map<string, number>();
      for (const job of fcfsOrder(view.jobs.filter((j) => !j.finished && !j.external))) {
        const { min, want } = jobBounds(job);
        const current = counts.get(job.id) ?? 0;
        let target: number;
        if (job.started || current > 0) {
          target = want <= current ? want : Math.min(want, current + idle);
        } else if (!blocked && idle >= min) {
          target = Math.min(want, idle);
        } else {
          target = 0;
          if (!opts.backfill) blocked = true;
        }
        idle -= Math.max(0, target - current);
        targets.set(job.id, target);
      }
      return targets;
    },
  };
}
