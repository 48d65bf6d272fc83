import { assignedCounts, fcfsOrder, jobBounds } from '../../../runtime/scheduler/cluster-view.js';
import type { SchedulingPolicy } from '../../../runtime/scheduler/policy.js';
import { rigidSize, type ManagedJob, type ManagedView } from './managed-job.js';

export interface EquipartitionOptions {
  /**
   * Minimum time between two scheduling actions (launch, shrink, expand) on one job, ms (the seed's
   * T_gap_rescale). Infinity: a job is sized once, at launch — the seed's moldable case.
   */
  tGapMs: number;
}

/**
 * Dynamic equipartition with minimum nodes first come, first served (seed §VI-E):
 * 1. Jobs that may not change now keep what they have: a rigid or moldable job once launched, a job
 *    with an action under way (`busy`), and a malleable job less than T_gap after its last change.
 * 2. The other jobs — running ones first, then waiting ones — get their minimum (a rigid job its
 *    size) in (createdAt, id) order while nodes last; a waiting job that does not fit stops the
 *    queue (strict FCFS, so a large job is never starved).
 * 3. The nodes left are shared equally among the jobs of step 2 that can take more (never above
 *    maxNodes); a remainder of r nodes goes one each to the r earliest.
 */
export function equipartitionPolicy(opts: EquipartitionOptions): SchedulingPolicy<ManagedView> {
  const tGap = opts.tGapMs;
  return {
    name: tGap === Infinity ? 'moldable' : `equipartition(tgap=${tGap}ms)`,
    targets(view: ManagedView): Map<string, number> {
      const counts = assignedCounts(view);
      const targets = new Map<string, number>();
      let free = view.nodes.length;
      const open: ManagedJob[] = [];
      for (const job of fcfsOrder(view.jobs.filter((j) => !j.finished))) {
        const current = counts.get(job.id) ?? 0;
        const launched = job.started || current > 0;
        const frozen = launched && (job.flexibility !== 'malleable' || job.busy === true || view.now - (job.lastChangeAt ?? -Infinity) < tGap);
        if (frozen || (job.busy === true)) {
          free -= current;
          targets.set(job.id, current);
        } else open.push(job);
      }
      const running = open.filter((j) => j.started || (counts.get(j.id) ?? 0) > 0);
      const waiting = open.filter((j) => !running.includes(j));
      const given = new Map<string, number>();
      const room = new Map<string, number>();
      for (const job of running) {
        const { min, max } = bounds(job);
        const take = Math.min(min, Math.max(0, free));
        given.set(job.id, take);
        room.set(job.id, max - take);
        free -= take;
      }
      for (const job of waiting) {
        const { min, max } = bounds(job);
        if (min > free) break; // strict FCFS: later jobs wait behind this one
        given.set(job.id, min);
        room.set(job.id, max - min);
        free -= min;
      }
      const scheduled = [...given.keys()];
      while (free > 0) {
        const hungry = scheduled.filter((id) => room.get(id)! > 0);
        if (hungry.length === 0) break;
        const share = Math.floor(free / hungry.length);
        for (const [i, id] of hungry.entries()) {
          const add = Math.min(room.get(id)!, share > 0 ? share : i < free ? 1 : 0);
          given.set(id, given.get(id)! + add);
          room.set(id, room.get(id)! - add);
        }
        free = view.nodes.length - [...targets.values()].reduce((a, b) => a + b, 0) - [...given.values()].reduce((a, b) => a + b, 0);
      }
      for (const job of open) targets.set(job.id, given.get(job.id) ?? 0);
      return targets;
    },
  };
}

function bounds(job: ManagedJob): { min: number; max: number } {
  if (job.flexibility === 'rigid') {
    const size = rigidSize(job);
    return { min: size, max: size };
  }
  const { min, max } = jobBounds(job);
  return { min: Math.max(1, min), max: Math.max(Math.max(1, min), max) };
}
