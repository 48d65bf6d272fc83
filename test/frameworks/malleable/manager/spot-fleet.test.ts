import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spotFleetRun } from '../../../../src/frameworks/malleable/manager/traces/spot-fleet.js';

const H = 3_600_000;
// 0.30 from 0, 0.60 from 1.5 h, 0.20 from 2.25 h, 0.40 from 5 h; window [0, 6 h).
const points = [{ time: 0, price: 0.3 }, { time: 1.5 * H, price: 0.6 }, { time: 2.25 * H, price: 0.2 }, { time: 5 * H, price: 0.4 }];
const round = (x: number) => +x.toFixed(6);

describe('spot fleet: a static on-demand set and a dynamic spot set (seed §VII-B)', () => {
  it('charges the on-demand set every hour and the spot set while the price is below the threshold (hand-computed)', () => {
    const r = spotFleetRun(points, 0, 6 * H, { onDemand: 2, onDemandPrice: 1, spot: 3, threshold: 0.5, vacateMs: 40_000 });
    // One spot instance: hours at 0 (.30), 1 h (.30), notice at 1.5 h, expand at 2.25 h, hours at 2.25, 3.25, 4.25 (.20)
    // and 5.25 h (.40): 1.60 for 5.25 usable hours. Three of them: 4.80 for 15.75 h. On demand: 2 × 6 h × 1.00.
    assert.deepEqual({ cost: round(r.cost), usableHours: round(r.usableHours), effectivePrice: round(r.effectivePrice) }, { cost: 16.8, usableHours: 27.75, effectivePrice: round(16.8 / 27.75) });
    assert.deepEqual(r.onDemand, { cost: 12, hours: 12 });
    assert.deepEqual({ cost: round(r.spot.cost), usableHours: r.spot.usableHours, instanceHours: r.spot.instanceHours, effectivePrice: round(r.spot.effectivePrice) }, { cost: 4.8, usableHours: 15.75, instanceHours: 18, effectivePrice: round(1.6 / 5.25) });
    assert.deepEqual(r.events, [{ t: 0, type: 'expand', price: 0.3 }, { t: 1.5 * H, type: 'notice', price: 0.6 }, { t: 2.25 * H, type: 'expand', price: 0.2 }]);
    assert.deepEqual([r.vacatedInTime, r.late], [1, 0]);
  });

  it('counts a vacate slower than the 2-minute notice as late (the cloud takes a running instance)', () => {
    const r = spotFleetRun(points, 0, 6 * H, { onDemand: 1, onDemandPrice: 1, spot: 1, threshold: 0.5, vacateMs: 130_000 });
    assert.deepEqual([r.vacatedInTime, r.late], [0, 1]);
    const shortNotice = spotFleetRun(points, 0, 6 * H, { onDemand: 1, onDemandPrice: 1, spot: 1, threshold: 0.5, vacateMs: 40_000, noticeMs: 30_000 });
    assert.deepEqual([shortNotice.vacatedInTime, shortNotice.late], [0, 1]);
  });

  it('starts below or above the threshold at the window\'s start, ends at its end, and without a spot set is the on-demand set alone', () => {
    // Until 2 h: the expand at 2.25 h is outside the window.
    assert.deepEqual(spotFleetRun(points, 0, 2 * H, { onDemand: 1, onDemandPrice: 1, spot: 2, threshold: 0.5, vacateMs: 1 }).events.map((e) => e.type), ['expand', 'notice']);
    // From 1.6 h the price in force is 0.60: no expand until 2.25 h.
    assert.deepEqual(spotFleetRun(points, 1.6 * H, 6 * H, { onDemand: 1, onDemandPrice: 1, spot: 2, threshold: 0.5, vacateMs: 1 }).events, [{ t: 2.25 * H, type: 'expand', price: 0.2 }]);
    const alone = spotFleetRun(points, 0, 6 * H, { onDemand: 2, onDemandPrice: 0.9, spot: 0, threshold: 0.5, vacateMs: 1 });
    assert.deepEqual([round(alone.cost), alone.usableHours, round(alone.effectivePrice), alone.events], [10.8, 12, 0.9, []]);
  });

  it('refuses a bad fleet naming the field', () => {
    assert.throws(() => spotFleetRun(points, 0, H, { onDemand: 1.5, onDemandPrice: 1, spot: 1, threshold: 0.5, vacateMs: 1 }), /spot fleet: onDemand must be a whole number ≥ 0, got 1.5/);
    assert.throws(() => spotFleetRun(points, 0, H, { onDemand: 1, onDemandPrice: 1, spot: 1, threshold: 0.5, vacateMs: -1 }), /spot fleet: vacateMs must be ≥ 0/);
  });
});
