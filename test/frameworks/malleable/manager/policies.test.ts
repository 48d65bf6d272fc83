import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideJobs } from '../../../../src/frameworks/malleable/manager/job-decisions.js';
import type { ManagedView } from '../../../../src/frameworks/malleable/manager/managed-job.js';
import { ids, job, view } from './policy-views.js';
import { equipartitionPolicy } from '../../../../src/frameworks/malleable/manager/equipartition-policy.js';
import { managerPolicy } from '../../../../src/frameworks/malleable/manager/policies.js';

/** Every expected schedule below is worked out by hand in its comment. */
const targets = (v: ManagedView, tGapMs: number) => Object.fromEntries(equipartitionPolicy({ tGapMs }).targets(v));

describe('equipartition with minimum nodes FCFS and T_gap', () => {
  it('gives a lone job the whole pool, up to its maximum', () => {
    assert.deepEqual(targets(view(0, {}, [job('A', 0)]), 40_000), { A: 16 });
    assert.deepEqual(targets(view(0, {}, [job('A', 0, { maxNodes: 10 })]), 40_000), { A: 10 });
  });

  it('splits 16 nodes 8/8 when a second job arrives after T_gap (4 + 4 minimums, 8 shared equally)', () => {
    const v = view(60_000, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0 }), job('B', 60_000)]);
    assert.deepEqual(targets(v, 40_000), { A: 8, B: 8 });
    // Nodes: A releases its 8 highest ids (same assignment time: highest id first), B gets them.
    assert.deepEqual(decideJobs(v, equipartitionPolicy({ tGapMs: 40_000 })), [
      { type: 'shrink', job: 'A', nodes: ids(8), removed: ids(16).slice(8) },
      { type: 'launch', job: 'B', nodes: ids(16).slice(8) },
    ]);
  });

  it('keeps a job that changed less than T_gap ago, so the newcomer waits', () => {
    const v = view(60_000, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0 }), job('B', 60_000)]);
    assert.deepEqual(targets(v, 100_000), { A: 16, B: 0 });
    assert.deepEqual(decideJobs(v, equipartitionPolicy({ tGapMs: 100_000 })), []);
  });

  it('shares a remainder one node each to the earliest jobs: 16 over three jobs is 6/5/5', () => {
    const v = view(500_000, { A: ids(8), B: ids(16).slice(8) }, [
      job('A', 0, { started: true, lastChangeAt: 0 }), job('B', 1, { started: true, lastChangeAt: 0 }), job('C', 2),
    ]);
    assert.deepEqual(targets(v, 40_000), { A: 6, B: 5, C: 5 });
  });

  it('moves caps: a job at its maximum leaves the rest to the others (A max 6 → 6, B → 10)', () => {
    const v = view(0, {}, [job('A', 0, { maxNodes: 6 }), job('B', 1)]);
    assert.deepEqual(targets(v, 0), { A: 6, B: 10 });
  });

  it('treats a rigid job as fixed at its size and a busy job as untouchable', () => {
    const v = view(100_000, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0 }), job('R', 1, { flexibility: 'rigid', desired: 6 })]);
    assert.deepEqual(targets(v, 0), { A: 10, R: 6 });
    const busy = view(100_000, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0, busy: true }), job('B', 1)]);
    assert.deepEqual(targets(busy, 0), { A: 16, B: 0 });
  });

  it('stops the queue at the first waiting job that does not fit (strict FCFS of minimums)', () => {
    const v = view(100_000, { A: ids(12) }, [
      job('A', 0, { started: true, lastChangeAt: 0, minNodes: 12 }), job('B', 1, { minNodes: 8 }), job('C', 2, { minNodes: 2 }),
    ]);
    // A needs 12; B's 8 do not fit in the 4 left; C (2) would, but waits behind B; A takes the 4.
    assert.deepEqual(targets(v, 0), { A: 16, B: 0, C: 0 });
  });
});

describe('moldable and rigid FCFS', () => {
  it('moldable: a running job never changes, a waiting one gets the free nodes when the pool empties', () => {
    const moldable = managerPolicy('moldable');
    const busyPool = view(10_000_000, { A: ids(16) }, [job('A', 0, { started: true, lastChangeAt: 0, flexibility: 'moldable' }), job('B', 1, { flexibility: 'moldable' })]);
    assert.deepEqual(Object.fromEntries(moldable.targets(busyPool)), { A: 16, B: 0 });
    const afterA = view(10_000_000, {}, [job('A', 0, { finished: true, started: true, flexibility: 'moldable' }), job('B', 1, { flexibility: 'moldable' }), job('C', 2, { flexibility: 'moldable' })]);
    assert.deepEqual(Object.fromEntries(moldable.targets(afterA)), { B: 8, C: 8 });
  });

  it('rigid FCFS: each job exactly its size, in arrival order, no overtaking', () => {
    const fcfs = managerPolicy('fcfs');
    const v = view(0, {}, [job('A', 0, { flexibility: 'rigid', desired: 10 }), job('B', 1, { flexibility: 'rigid', desired: 8 }), job('C', 2, { flexibility: 'rigid', desired: 4 })]);
    assert.deepEqual(Object.fromEntries(fcfs.targets(v)), { A: 10, B: 0, C: 0 });
    assert.deepEqual(decideJobs(v, fcfs), [{ type: 'launch', job: 'A', nodes: ids(10) }]);
    const later = view(0, { A: ids(10) }, [job('A', 0, { flexibility: 'rigid', desired: 10, finished: true, started: true }), job('B', 1, { flexibility: 'rigid', desired: 8 }), job('C', 2, { flexibility: 'rigid', desired: 4 })]);
    // A's 10 nodes count as idle once it finished: B (8) and C (4) both start.
    assert.deepEqual(decideJobs(later, fcfs), [{ type: 'launch', job: 'B', nodes: ids(8) }, { type: 'launch', job: 'C', nodes: ids(12).slice(8) }]);
  });
});
