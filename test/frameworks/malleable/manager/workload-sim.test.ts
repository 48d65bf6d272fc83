import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPolicy } from '../../../../src/frameworks/malleable/manager/policies.js';
import { simulateWorkload, type SimJobSpec } from '../../../../src/frameworks/malleable/manager/workload-sim.js';

/** Two jobs of 40 node-seconds on 4 nodes; B arrives at t = 5 s. Expected values worked out by hand. */
const jobs = (flexibility: SimJobSpec['flexibility'], sizes: [number, number]): SimJobSpec[] => [
  { id: 'A', arrival: 0, flexibility, nodes: sizes[0], minNodes: 1, maxNodes: 4, work: 40 },
  { id: 'B', arrival: 5, flexibility, nodes: sizes[1], minNodes: 1, maxNodes: 4, work: 40 },
];

describe('workload simulation', () => {
  it('malleable, free rescales: A shrinks to 2 at 5 s and ends at 15 s, B expands to 4 then and ends at 20 s', () => {
    const r = simulateWorkload(jobs('malleable', [4, 4]), 4, managerPolicy('equipartition', { tGapMs: 0 }), { launch: 0, shrink: 0, expand: 0 });
    assert.deepEqual(r.jobs.map((j) => [j.id, j.start, j.end]), [['A', 0, 15], ['B', 5, 20]]);
    assert.deepEqual([r.totalTime, r.meanResponse, r.meanCompletion, r.utilization], [20, 0, 15, 1]);
    assert.deepEqual(r.timeline, [
      { t: 0, job: 'A', nodes: 4 }, { t: 5, job: 'A', nodes: 2 }, { t: 5, job: 'B', nodes: 2 },
      { t: 15, job: 'A', nodes: 0 }, { t: 15, job: 'B', nodes: 4 }, { t: 20, job: 'B', nodes: 0 },
    ]);
  });

  it('malleable with costs (launch 1 s, shrink 2 s, expand 3 s): B launches on the shrink acknowledgement at 7 s', () => {
    const r = simulateWorkload(jobs('malleable', [4, 4]), 4, managerPolicy('equipartition', { tGapMs: 0 }), { launch: 1, shrink: 2, expand: 3 });
    // A: computes 1–5 on 4 (16), paused 5–7, then 24 left on 2 → ends 19. B: launched 7, computes 8–19 on 2 (22),
    // expands at 19 (paused to 22), 18 left on 4 → ends 26.5. Nodes are held all the time: utilization 1.
    assert.deepEqual(r.jobs.map((j) => [j.id, j.start, j.end, j.rescales]), [['A', 0, 19, 1], ['B', 7, 26.5, 1]]);
    assert.deepEqual([r.totalTime, r.meanResponse, r.meanCompletion, r.utilization], [26.5, 1, 20.25, 1]);
  });

  it('rigid FCFS: B (2 nodes) waits for A (4 nodes) to end at 10 s and runs 20 s', () => {
    const r = simulateWorkload(jobs('rigid', [4, 2]), 4, managerPolicy('fcfs'), { launch: 0, shrink: 0, expand: 0 });
    assert.deepEqual(r.jobs.map((j) => [j.id, j.start, j.end]), [['A', 0, 10], ['B', 10, 30]]);
    assert.deepEqual([r.totalTime, r.meanResponse, r.meanCompletion], [30, 2.5, 17.5]);
    assert.equal(r.utilization.toFixed(6), (80 / 120).toFixed(6));
  });

  it('T_gap 8 s holds A at 4 nodes until 8 s, so B starts only then', () => {
    const r = simulateWorkload(jobs('malleable', [4, 4]), 4, managerPolicy('equipartition', { tGapMs: 8000 }), { launch: 0, shrink: 0, expand: 0 }, 8);
    // A launched at 0 may change from 8 s: it has 8 left then; shrinks to 2 → ends 12. B: 2 nodes 8–12 (8 done),
    // may change only from 16 (T_gap after its launch): 2 nodes to 16 (8 more), then 4 nodes for the last 24 → ends 22.
    assert.deepEqual(r.jobs.map((j) => [j.id, j.start, j.end]), [['A', 0, 12], ['B', 8, 22]]);
  });
});
