import type { PricePoint } from './spot-price-trace.js';
import { priceSensitiveRun, type SpotRun } from './spot-rescale.js';

const HOUR = 3_600_000;
/** The interruption notice a cloud gives a spot instance before it takes it back (AWS: 2 minutes). */
export const SPOT_NOTICE_MS = 120_000;

export interface SpotFleetOptions {
  /** Instances of the static set: on-demand, always on, enough for the job's minimum. */
  onDemand: number;
  /** On-demand price, USD per instance-hour. */
  onDemandPrice: number;
  /** Instances of the dynamic set (spot, one market). */
  spot: number;
  /** The job runs on the spot set only while the spot price is below this (USD per instance-hour). */
  threshold: number;
  /** How long the job takes to vacate the spot set once told (a measured shrink), ms. */
  vacateMs: number;
  /** Interruption notice, ms (default SPOT_NOTICE_MS). */
  noticeMs?: number;
}

/** A change of the dynamic set: the job expands onto it, or is told to leave it (the notice). */
export interface FleetEvent {
  t: number;
  type: 'expand' | 'notice';
  price: number;
}

export interface SpotFleetRun {
  /** Everything charged, USD: the static set at the on-demand price, the spot set each instance-hour at the price at its start. */
  cost: number;
  /** Instance-hours the job could use, both sets. */
  usableHours: number;
  /** cost / usableHours. */
  effectivePrice: number;
  onDemand: { cost: number; hours: number };
  /** The dynamic set (`spot` instances alike). */
  spot: SpotRun;
  events: FleetEvent[];
  /** Notices the job vacated within (vacateMs < noticeMs), and those it did not (the cloud took running instances: a crash, work lost to a rollback). */
  vacatedInTime: number;
  late: number;
}

/**
 * Seed §VII-B with a cloud's interruption notice: a static on-demand set keeps the job running; a
 * dynamic set of spot instances (one market) is expanded onto while the spot price is below
 * `threshold` and vacated when it reaches it. The threshold is the maximum price asked for the spot
 * instances, so the cloud interrupts them then, with `noticeMs` of notice, and the job shrinks off
 * them on the notice. Charged as the seed does (an instance-hour pays the price at its start; the
 * on-demand set pays its price for every hour of [from, to)). Usable hours of the dynamic set end at
 * the notice (priceSensitiveRun).
 */
export function spotFleetRun(points: readonly PricePoint[], from: number, to: number, opts: SpotFleetOptions): SpotFleetRun {
  for (const k of ['onDemand', 'spot'] as const) if (!(Number.isInteger(opts[k]) && opts[k] >= 0)) throw new Error(`spot fleet: ${k} must be a whole number ≥ 0, got ${opts[k]}`);
  if (!(opts.vacateMs >= 0)) throw new Error(`spot fleet: vacateMs must be ≥ 0, got ${opts.vacateMs}`);
  const one = priceSensitiveRun(points, from, to, opts.threshold);
  const spot: SpotRun = { ...one, cost: one.cost * opts.spot, usableHours: one.usableHours * opts.spot, instanceHours: one.instanceHours * opts.spot };
  const hours = (to - from) / HOUR;
  const onDemand = { cost: opts.onDemand * hours * opts.onDemandPrice, hours: opts.onDemand * hours };
  const events = opts.spot > 0 ? crossings(points, from, to, opts.threshold) : [];
  const notices = events.filter((e) => e.type === 'notice').length;
  const inTime = opts.vacateMs < (opts.noticeMs ?? SPOT_NOTICE_MS);
  const cost = onDemand.cost + spot.cost;
  const usableHours = onDemand.hours + spot.usableHours;
  return { cost, usableHours, effectivePrice: usableHours > 0 ? cost / usableHours : 0, onDemand, spot, events, vacatedInTime: inTime ? notices : 0, late: inTime ? 0 : notices };
}

/** Times in [from, to) the price in force crosses the threshold (below: expand; at or above: notice). */
function crossings(points: readonly PricePoint[], from: number, to: number, threshold: number): FleetEvent[] {
  const first = [...points].reverse().find((p) => p.time <= from)?.price ?? points[0]!.price;
  const events: FleetEvent[] = first < threshold ? [{ t: from, type: 'expand', price: first }] : [];
  let below = first < threshold;
  for (const p of points) {
    if (p.time <= from || p.time >= to || (p.price < threshold) === below) continue;
    below = p.price < threshold;
    events.push({ t: p.time, type: below ? 'expand' : 'notice', price: p.price });
  }
  return events;
}
