import { assignedCounts, fcfsOrder, jobBounds, type SchedulingPolicy } from '../../../runtime/scheduler/index.js';
import { rigidSize, type ManagedJob, type ManagedView } from './managed-job.js';
import { jobGapMs, worthRescaling, type RescaleCostOptions } from './rescale-cost.js';

export interface EquipartitionOptions extends RescaleCostOptions {
  /**
   * Minimum time between two scheduling actions (launch, shrink, expand) on one job, ms (the seed's
   * T_gap_rescale); it grows with the job's measured T_rescale (see rescale-cost.ts). Infinity: a job
   * is sized once, at launch — the seed's moldable case.
   */
  tGapMs: number;
  /** Start waiting jobs behind one that does not fit, when their minimum fits and they cannot delay it (below). */
  backfill?: boolean;
}

/**
 * Dynamic equipartition with minimum nodes first come, first served (seed §VI-E), knowing what a
 * rescale costs:
 * 1. Jobs that may not change now keep what they have: a rigid or moldable job once launched, a job
 *    with an action under way (`busy`), and a malleable job less than its T_gap after its last
 *    change (unless an operator pinned it: then it is brought to its pinned size at once).
 * 2. The other jobs — running ones first, then waiting ones — get their minimum (a rigid job its
 *    size) in (createdAt, id) order while nodes last; a waiting job that does not fit stops the
 *    queue (strict FCFS, so a large job is never starved). With `backfill`, a later waiting job
 *    starts anyway when its minimum fits now and the first blocked job's minimum would still fit
 *    once every running malleable job is at its minimum (so it is not delayed beyond the T_gaps
 *    it waits for anyway); a backfilled job that is not malleable gets its minimum only.
 * 3. The nodes left are shared equally among the jobs of step 2 that can take more (never above
 *    maxNodes); a remainder of r nodes goes one each to the r earliest.
 * 4. A running job whose new size is not worth its measured T_rescale (worthRescaling) keeps what
 *    it has, and steps 2–3 are done again without it (a pinned job is exempt).
 */
export function equipartitionPolicy(opts: EquipartitionOptions): SchedulingPolicy<ManagedView> {
  const tGap = opts.tGapMs;
  return {
    name: tGap === Infinity ? 'moldable' : `equipartition(tgap=${tGap}ms)`,
    targets(view: ManagedView): Map<string, number> {
      const counts = assignedCounts(view);
      const kept = new Set<string>();
      for (;;) {
        const targets = share(view, counts, kept, opts);
        const unworthy = view.jobs.filter((j) => {
          const current = counts.get(j.id) ?? 0;
          const target = targets.get(j.id) ?? 0;
          return current > 0 && !kept.has(j.id) && j.pinned !== true && !worthRescaling(opts, current, target, j.tRescaleMs);
        });
        if (unworthy.length === 0) return targets;
        for (const j of unworthy) kept.add(j.id);
      }
    },
  };
}

/** Steps 1–3; the jobs in `kept` keep what they hold. */
function share(view: ManagedView, counts: ReadonlyMap<string, number>, kept: ReadonlySet<string>, opts: EquipartitionOptions): Map<string, number> {
  const targets = new Map<string, number>();
  let free = view.nodes.length;
  const open: ManagedJob[] = [];
  for (const job of fcfsOrder(view.jobs.filter((j) => !j.finished))) {
    const current = counts.get(job.id) ?? 0;
    const launched = job.started || current > 0;
    const waitingGap = job.pinned !== true && view.now - (job.lastChangeAt ?? -Infinity) < jobGapMs(opts, job.tRescaleMs);
    const frozen = kept.has(job.id) || job.busy === true || (launched && (job.flexibility !== 'malleable' || waitingGap));
    if (frozen) {
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
  let blocked: ManagedJob | undefined;
  let reserve = opts.backfill === true ? backfillRoom(view, counts) : 0;
  for (const job of waiting) {
    const { min, max } = bounds(job);
    if (blocked === undefined && min <= free) {
      reserve -= min;
    } else if (blocked === undefined) {
      blocked = job; // strict FCFS: later jobs wait behind this one…
      if (opts.backfill !== true) break;
      reserve -= min;
      continue;
    } else if (min > free || min > reserve) continue; // …unless they fit now and leave room for it
    else reserve -= min;
    given.set(job.id, min);
    room.set(job.id, blocked !== undefined && job.flexibility !== 'malleable' ? 0 : max - min);
    free -= min;
  }
  const scheduled = [...given.keys()];
  while (free > 0) {
    const hungry = scheduled.filter((id) => room.get(id)! > 0);
    if (hungry.length === 0) break;
    const each = Math.floor(free / hungry.length);
    for (const [i, id] of hungry.entries()) {
      const add = Math.min(room.get(id)!, each > 0 ? each : i < free ? 1 : 0);
      given.set(id, given.get(id)! + add);
      room.set(id, room.get(id)! - add);
    }
    free = view.nodes.length - [...targets.values()].reduce((a, b) => a + b, 0) - [...given.values()].reduce((a, b) => a + b, 0);
  }
  for (const job of open) targets.set(job.id, given.get(job.id) ?? 0);
  return targets;
}

/**
 * The nodes waiting jobs could have once every running job gives back what it may: the pool less
 * each running malleable job's minimum and each other running job's nodes.
 */
function backfillRoom(view: ManagedView, counts: ReadonlyMap<string, number>): number {
  let room = view.nodes.length;
  for (const job of view.jobs) {
    const current = counts.get(job.id) ?? 0;
    if (job.finished || !(job.started || current > 0)) continue;
    room -= job.flexibility === 'malleable' ? bounds(job).min : current;
  }
  return room;
}

function bounds(job: ManagedJob): { min: number; max: number } {
  if (job.flexibility === 'rigid') {
    const size = rigidSize(job);
    return { min: size, max: size };
  }
  const { min, max } = jobBounds(job);
  return { min: Math.max(1, min), max: Math.max(Math.max(1, min), max) };
}
