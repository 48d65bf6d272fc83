/**
 * What a rescale costs, as the manager has measured it (the jobs' acknowledged T_rescale), and
 * what follows for the policy (docs/malleable.md, "A policy that knows the cost"):
 * - T_gap adapts: a job is rescaled at most once per max(T_gap floor, T_rescale / overhead), so it
 *   spends at most `overhead` of its time rescaling;
 * - a rescale is proposed only when its expected gain over the next T_gap exceeds k × its cost.
 */
export interface RescaleCostOptions {
  /** The operator's T_gap: the least time between two rescales of a job, ms (Infinity: never rescaled). */
  tGapMs: number;
  /** k: a rescale's expected gain must exceed k times its cost (0: every rescale is worth it). */
  costFactor?: number;
  /** The largest share of a job's time spent rescaling, in (0, 1]: T_gap grows to T_rescale / this. */
  maxOverhead?: number;
}

export const DEFAULT_COST_FACTOR = 2;
export const DEFAULT_MAX_OVERHEAD = 0.1;

/** A job's T_gap, ms: the floor, or longer when the job's measured rescales are costly. */
export function jobGapMs(opts: RescaleCostOptions, tRescaleMs: number | undefined): number {
  const overhead = opts.maxOverhead ?? DEFAULT_MAX_OVERHEAD;
  return Math.max(opts.tGapMs, tRescaleMs !== undefined && overhead > 0 ? tRescaleMs / overhead : 0);
}

/**
 * Whether moving a running job from `from` to `to` nodes is worth what it costs. Gain: the node-time
 * the change puts to use over the job's next T_gap (|to − from| nodes, given to this job or by it to
 * others); cost: the job stops on all its nodes for one T_rescale (max(from, to) × T_rescale). With no
 * measurement yet the cost is unknown and the rescale is proposed.
 */
export function worthRescaling(opts: RescaleCostOptions, from: number, to: number, tRescaleMs: number | undefined): boolean {
  if (from === to || tRescaleMs === undefined) return true;
  const k = opts.costFactor ?? DEFAULT_COST_FACTOR;
  // k = 0 is documented as "every rescale is worth it": with T_gap 0 the gain below is 0 too, and 0 > 0 would refuse all.
  if (k === 0) return true;
  return Math.abs(to - from) * jobGapMs(opts, tRescaleMs) > k * Math.max(from, to) * tRescaleMs;
}

/** Measurements kept per job, and for the pool: estimates are their means, so one slow rescale does not rule for ever. */
const KEPT_PER_JOB = 5;
const KEPT_FOR_POOL = 20;

/**
 * The measured T_rescale of each job (its last few rescales) and of the pool (the last few of any
 * job, finished ones too): a job never rescaled yet is estimated by the pool's, and with no
 * measurement at all by nothing.
 */
export class RescaleCosts {
  private readonly byJob = new Map<string, number[]>();
  private readonly pool: number[] = [];

  record(job: string, tRescaleMs: number): void {
    if (!Number.isFinite(tRescaleMs) || tRescaleMs < 0) return;
    const list = this.byJob.get(job) ?? [];
    this.byJob.set(job, keepLast([...list, tRescaleMs], KEPT_PER_JOB));
    this.pool.splice(0, this.pool.length, ...keepLast([...this.pool, tRescaleMs], KEPT_FOR_POOL));
  }

  /** A finished job's own measurements are dropped (the pool keeps them). */
  forget(job: string): void {
    this.byJob.delete(job);
  }

  /** The job's mean T_rescale, else the pool's, else undefined (nothing measured yet), ms. */
  estimate(job: string): number | undefined {
    const own = this.byJob.get(job);
    if (own && own.length > 0) return mean(own);
    return this.pool.length > 0 ? mean(this.pool) : undefined;
  }
}

const keepLast = (xs: number[], n: number) => xs.slice(Math.max(0, xs.length - n));
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
