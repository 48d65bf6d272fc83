/**
 * A policy that knows what a rescale costs, deterministically (hand-built views and ManagerCore on a
 * clock the test moves; every expected value is worked out in its comment): a rescale only when its
 * gain over the next T_gap exceeds k × T_rescale, T_gap adapting to the measured T_rescale, backfill
 * of waiting jobs that cannot delay the first blocked one, and an operator's pinned size that the
 * policy keeps until it is released.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { equipartitionPolicy, type EquipartitionOptions } from '../../../../src/frameworks/malleable/manager/equipartition-policy.js';
import type { ManagedJob, ManagedView } from '../../../../src/frameworks/malleable/manager/managed-job.js';
import { ids, job, view } from './policy-views.js';
import { ManagerCore, type QueuedJob } from '../../../../src/frameworks/malleable/manager/manager-core.js';
import { jobGapMs, RescaleCosts, worthRescaling } from '../../../../src/frameworks/malleable/manager/rescale-cost.js';

const COSTLY = 8700; // ms: Charm++'s worst T_rescale in the seed's Table II
const OPTS: EquipartitionOptions = { tGapMs: 40_000, costFactor: 2, maxOverhead: 0.1 };
const targets = (v: ManagedView, opts: EquipartitionOptions = OPTS) => Object.fromEntries(equipartitionPolicy(opts).targets(v));

describe('the cost of a rescale (rescale-cost.ts)', () => {
  it('T_gap grows to T_rescale / overhead above its floor', () => {
    assert.equal(jobGapMs(OPTS, undefined), 40_000, 'nothing measured: the floor');
    assert.equal(jobGapMs(OPTS, 100), 40_000, '100 ms / 0.1 = 1 s, below the floor');
    assert.equal(jobGapMs(OPTS, COSTLY), 87_000, '8.7 s / 0.1 = 87 s');
    assert.equal(jobGapMs({ tGapMs: Infinity }, COSTLY), Infinity, 'moldable stays moldable');
  });

  it('a rescale is worth it when |Δn| × T_gap > k × max(n, n′) × T_rescale', () => {
    // T_gap 87 s. 16 → 12: 4 × 87 = 348 node-s against 2 × 16 × 8.7 = 278.4: worth it.
    assert.equal(worthRescaling(OPTS, 16, 12, COSTLY), true);
    // 16 → 14: 2 × 87 = 174 < 278.4: not.
    assert.equal(worthRescaling(OPTS, 16, 14, COSTLY), false);
    // 14 → 16 (an expand) costs the same: not.
    assert.equal(worthRescaling(OPTS, 14, 16, COSTLY), false);
    // 100 ms: T_gap 40 s; 2 × 40 = 80 > 2 × 16 × 0.1 = 3.2: worth it. Unmeasured: proposed.
    assert.equal(worthRescaling(OPTS, 16, 14, 100), true);
    assert.equal(worthRescaling(OPTS, 16, 15, undefined), true);
    // k = 0: every rescale is worth it.
    assert.equal(worthRescaling({ ...OPTS, costFactor: 0 }, 16, 15, COSTLY), true);
    // … also with T_gap 0 and no adaptation, where the gain is 0 (once refused every measured rescale).
    assert.equal(worthRescaling({ tGapMs: 0, costFactor: 0, maxOverhead: 0 }, 2, 1, COSTLY), true);
  });

  it('estimates a job by its own last rescales, else by the pool\'s, else not at all', () => {
    const costs = new RescaleCosts();
    assert.equal(costs.estimate('A'), undefined);
    costs.record('A', 100);
    costs.record('A', 300);
    assert.equal(costs.estimate('A'), 200);
    assert.equal(costs.estimate('B'), 200, 'B was never rescaled: the pool\'s mean');
    costs.record('B', 800);
    assert.equal(costs.estimate('B'), 800);
    for (const ms of [10, 10, 10, 10, 10]) costs.record('A', ms);
    assert.equal(costs.estimate('A'), 10, 'the last five only');
    costs.forget('A');
    assert.equal(costs.estimate('A'), (100 + 300 + 800 + 50) / 8, 'a finished job\'s measurements stay in the pool\'s');
  });
});

describe('equipartition weighing T_rescale', () => {
  it('keeps a costly job whole when the newcomer\'s share is too small to pay for the shrink', () => {
    // A on 16 (min 4); B min = max = 2 arrives at 200 s, past any T_gap. Equipartition: A 14, B 2.
    const jobs = (tRescaleMs?: number) => [job('A', 0, { started: true, lastChangeAt: 0, ...(tRescaleMs !== undefined ? { tRescaleMs } : {}) }), job('B', 1, { minNodes: 2, maxNodes: 2, desired: 2 })];
    // Cheap (100 ms): 2 × 40 s > 2 × 16 × 0.1 s: A shrinks to 14.
    assert.deepEqual(targets(view(200_000, { A: ids(16) }, jobs(100))), { A: 14, B: 2 });
    // Costly (8.7 s): 16 → 14 is not worth it (above); A keeps 16 and B, which no longer fits, waits.
    assert.deepEqual(targets(view(200_000, { A: ids(16) }, jobs(COSTLY))), { A: 16, B: 0 });
    // B with max 8: 4 + 4 minimums, 8 shared: A 10, B 6 — 16 → 10 is 6 × 87 = 522 > 278.4: worth it even at 8.7 s.
    const wide = [job('A', 0, { started: true, lastChangeAt: 0, tRescaleMs: COSTLY }), job('B', 1, { maxNodes: 6 })];
    assert.deepEqual(targets(view(200_000, { A: ids(16) }, wide)), { A: 10, B: 6 });
  });

  it('keeps a job T_gap = T_rescale / overhead after its last change when that is above the floor', () => {
    const at = (now: number, tRescaleMs?: number) => view(now, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0, ...(tRescaleMs !== undefined ? { tRescaleMs } : {}) }), job('B', 1)]);
    // 60 s after A's last change: past the 40 s floor; unmeasured or cheap A is shared 8/8 (4 + 4, 8 equally).
    assert.deepEqual(targets(at(60_000)), { A: 8, B: 8 });
    assert.deepEqual(targets(at(60_000, 100)), { A: 8, B: 8 });
    // Measured 8.7 s: T_gap is 87 s, so at 60 s A keeps its 16; at 90 s it is shared (16 → 8: 8 × 87 > 278.4).
    assert.deepEqual(targets(at(60_000, COSTLY)), { A: 16, B: 0 });
    assert.deepEqual(targets(at(90_000, COSTLY)), { A: 8, B: 8 });
  });
});

describe('backfill', () => {
  // A runs on 10 and changed just now (inside T_gap), min 4: 6 idle. B (min 10) does not fit.
  const jobs = (d: Partial<ManagedJob>) => [job('A', 0, { started: true, lastChangeAt: 100_000 }), job('B', 1, { minNodes: 10 }), job('C', 2, { minNodes: 3 }), job('D', 3, { minNodes: 2, ...d })];
  const v = (d: Partial<ManagedJob> = {}) => view(100_000, { A: ids(10) }, jobs(d));

  it('strict FCFS without it: everyone waits behind B', () => {
    assert.deepEqual(targets(v()), { A: 10, B: 0, C: 0, D: 0 });
  });

  it('starts a later job whose minimum fits now and leaves room for B once A is at its minimum', () => {
    // Room once A is at its minimum 4: 12; B takes 10, 2 left. C (3) fits the 6 idle nodes but not the 2: it
    // would delay B. D (2) fits both: it starts, and as a malleable job takes the 4 idle nodes left too (6);
    // it gives them back when B can start (A 4 + B 10 + D 2 = 16).
    assert.deepEqual(targets(v(), { ...OPTS, backfill: true }), { A: 10, B: 0, C: 0, D: 6 });
  });

  it('gives a backfilled moldable or rigid job its minimum only (it would never give more back)', () => {
    assert.deepEqual(targets(v({ flexibility: 'moldable' }), { ...OPTS, backfill: true }), { A: 10, B: 0, C: 0, D: 2 });
  });

  it('backfills nothing when rigid jobs hold what B needs', () => {
    const rigid = [job('R', 0, { flexibility: 'rigid', desired: 10, started: true }), job('B', 1, { minNodes: 10 }), job('D', 3, { minNodes: 2 })];
    // Room once running jobs give back what they may: 16 − 10 (rigid keeps its size) = 6 < B's 10: no backfill.
    assert.deepEqual(targets(view(0, { R: ids(10) }, rigid), { ...OPTS, backfill: true }), { R: 10, B: 0, D: 0 });
  });
});

describe('an operator\'s pinned size', () => {
  it('holds against equipartition, T_gap and cost alike', () => {
    // Alone on 16 nodes, a malleable job would grow to 16; pinned at 1 (min = max = 1) it stays at 1.
    assert.deepEqual(targets(view(500_000, { A: ids(1) }, [job('A', 0, { started: true, lastChangeAt: 0, minNodes: 1 })])), { A: 16 });
    assert.deepEqual(targets(view(500_000, { A: ids(1) }, [job('A', 0, { started: true, lastChangeAt: 0, minNodes: 1, maxNodes: 1, pinned: true })])), { A: 1 });
    // Pinned at 4 but on 3 (a warned node was vacated): brought back to 4 at once, inside T_gap and however costly.
    const back = view(1000, { A: ids(3) }, [job('A', 0, { started: true, lastChangeAt: 1000, minNodes: 4, maxNodes: 4, pinned: true, tRescaleMs: COSTLY })]);
    assert.deepEqual(targets(back), { A: 4 });
  });
});

describe('ManagerCore under simulated time', () => {
  const queued = (id: string, createdAt: number, extra: Partial<QueuedJob> = {}): QueuedJob => ({ id, createdAt, flexibility: 'malleable', nodes: 1, minNodes: 1, maxNodes: 4, finished: false, ...extra });

  it('measured T_rescale lengthens T_gap (the next pass comes later) and is weighed against each proposal', () => {
    let now = 0;
    const core = new ManagerCore(equipartitionPolicy(OPTS), () => now);
    const pool = ids(4);
    const a = queued('A', 0);
    assert.deepEqual(core.schedule([a], pool), [{ type: 'launch', job: 'A', nodes: pool }]);
    assert.equal(core.nextGapEnd([a], OPTS), 40_000, 'unmeasured: the 40 s floor');
    core.rescaleMeasured('A', 6000);
    assert.equal(core.nextGapEnd([a], OPTS), 60_000, '6 s / 0.1 = 60 s after the launch');
    // B (min = max = 1) at 50 s: inside A's 60 s. Nothing moves.
    now = 50_000;
    const b = queued('B', 50_000, { minNodes: 1, maxNodes: 1 });
    assert.deepEqual(core.schedule([a, b], pool), []);
    // At 61 s: 4 → 3 gains 1 × 60 = 60 node-s against 2 × 4 × 6 = 48: A gives B one node.
    now = 61_000;
    assert.deepEqual(core.schedule([a, b], pool), [{ type: 'shrink', job: 'A', nodes: ids(3), removed: ['n03'] }]);
    assert.deepEqual(core.shrinkAcknowledged('A', ids(3)), [{ type: 'launch', job: 'B', nodes: ['n03'] }]);
    core.rescaleMeasured('A', 9000);
    // A's estimate is now 7.5 s (mean of 6 and 9): T_gap 75 s. B finishes at 200 s; A could take its node back,
    // 3 → 4: 1 × 75 = 75 node-s against 2 × 4 × 7.5 = 60: worth it.
    now = 200_000;
    assert.deepEqual(core.jobFinished('B'), []);
    assert.deepEqual(core.schedule([a, { ...b, finished: true }], pool), [{ type: 'expand', job: 'A', nodes: pool, added: ['n03'] }]);
  });

  it('an operator\'s pin sticks through every later pass until released', () => {
    let now = 0;
    const core = new ManagerCore(equipartitionPolicy({ tGapMs: 0 }), () => now);
    const pool = ids(4);
    const a = queued('A', 0);
    core.schedule([a], pool);
    // The operator's `scale A 1`: carried out by the service as a shrink; then the job is pinned at 1.
    now = 1000;
    const shrink = { type: 'shrink' as const, job: 'A', nodes: ['n00'], removed: ['n01', 'n02', 'n03'] };
    assert.deepEqual(core.executor.execute([shrink]), [shrink]);
    core.shrinkAcknowledged('A', ['n00']);
    const pinned = { ...a, minNodes: 1, maxNodes: 1, nodes: 1, pinned: true };
    for (const t of [2000, 60_000, 3_600_000]) {
      now = t;
      assert.deepEqual(core.schedule([pinned], pool), [], `at ${t} ms the pinned job is left on 1 node`);
    }
    // Released: back to its range [1, 4]; with T_gap 0 and nothing measured the policy grows it to the pool.
    assert.deepEqual(core.schedule([a], pool), [{ type: 'expand', job: 'A', nodes: pool, added: ['n01', 'n02', 'n03'] }]);
  });
});
