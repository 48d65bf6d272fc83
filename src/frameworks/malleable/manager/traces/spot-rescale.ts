import type { PricePoint } from './spot-price-trace.js';

const HOUR = 3_600_000;

export interface SpotRun {
  /** What the spot instance was charged, USD. */
  cost: number;
  /** Hours it was running (usable for the job). */
  usableHours: number;
  /** cost / usableHours. */
  effectivePrice: number;
  /** Instance-hours started (each charged the price at its start). */
  instanceHours: number;
  /** Times the dynamic set was expanded onto / shrunk off this instance. */
  expands: number;
  shrinks: number;
}

/**
 * One instance of the dynamic spot set under price-sensitive rescaling (seed §VII-B), over
 * [from, to): the job expands onto it when the spot price falls below `threshold` and shrinks off it
 * when the price reaches the threshold (the bid stays high, so the cloud never takes it). An
 * instance-hour is charged the spot price at its start; at an hour boundary with the price at or
 * above the threshold the instance is released instead of starting another hour. `threshold` =
 * Infinity is the always-on instance without rescaling. The price in force at a time includes a
 * change at that very time; before the first point it is the first point's.
 */
export function priceSensitiveRun(points: readonly PricePoint[], from: number, to: number, threshold: number): SpotRun {
  if (points.length === 0) throw new Error('a price series needs at least one point');
  const changes = points.filter((p) => p.time > from && p.time < to);
  let price = [...points].reverse().find((p) => p.time <= from)?.price ?? points[0]!.price;
  let running = false;
  let hourStart = 0;
  let runningSince = 0;
  const run: SpotRun = { cost: 0, usableHours: 0, effectivePrice: 0, instanceHours: 0, expands: 0, shrinks: 0 };
  const startHour = (t: number) => {
    hourStart = t;
    run.cost += price;
    run.instanceHours++;
  };
  const stop = (t: number) => {
    running = false;
    run.usableHours += (t - runningSince) / HOUR;
    run.shrinks++;
  };
  /** Hour boundaries up to (not including) `until`, at the current price. */
  const boundaries = (until: number) => {
    while (running && hourStart + HOUR < until) {
      const t = hourStart + HOUR;
      if (price < threshold) startHour(t);
      else stop(t);
    }
  };
  if (price < threshold) {
    running = true;
    runningSince = from;
    run.expands++;
    startHour(from);
  }
  for (const c of changes) {
    boundaries(c.time);
    price = c.price;
    boundaries(c.time + 1); // an hour starting at the very time of a change pays the new price
    if (running && price >= threshold) stop(c.time);
    else if (!running && price < threshold) {
      running = true;
      runningSince = c.time;
      run.expands++;
      startHour(c.time);
    }
  }
  boundaries(to);
  if (running) run.usableHours += (to - runningSince) / HOUR;
  run.effectivePrice = run.usableHours > 0 ? run.cost / run.usableHours : 0;
  return run;
}
