import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterReading } from '../../src/dashboard/cluster-reader.js';
import { SnapshotBuilder } from '../../src/dashboard/snapshot-builder.js';
import type { NodeStats } from '../../src/runtime/node/node-stats.js';

function node(id: string, job: string | null, s: Partial<NodeStats> = {}): ClusterReading['nodes'][number] {
  return {
    info: { id, address: `127.0.0.1:${id.length}`, workers: 2, job, assignment: job ?? '' },
    stats: { job, workers: 2, busy: 0, queued: 0, tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, coord: { reads: 0, writes: 0, transactions: 0, retries: 0 }, at: 0, ...s },
  };
}

const job = (id: string, vars: Record<string, number> = {}, outcome: ClusterReading['jobs'][number]['outcome'] = null) =>
  ({ id, spec: { label: 'file:///t.js', nodes: { requested: 2, min: 0 }, createdAt: 1 }, outcome, vars });

describe('SnapshotBuilder', () => {
  it('derives rates from counter deltas over the elapsed time', () => {
    const b = new SnapshotBuilder();
    b.add({ at: 1000, nodes: [node('a', 'j'), node('b', 'j')], jobs: [job('j')] });
    const s = b.add({ at: 3000, nodes: [node('a', 'j', { tasksDone: 40, stealsIn: 4 }), node('b', 'j', { tasksDone: 20, migrationsOut: 6 })], jobs: [job('j')] });
    assert.equal(s.point.tasksPerSec, 30);
    assert.equal(s.point.stealsPerSec, 2);
    assert.equal(s.point.migrationsPerSec, 3);
    assert.deepEqual(s.nodes.map((n) => n.tasksPerSec), [20, 10]);
    assert.equal(s.jobs[0]!.tasksDone, 60);
  });

  it('keeps a job\'s task total when a node leaves, and treats a restarted counter as new growth', () => {
    const b = new SnapshotBuilder();
    b.add({ at: 0, nodes: [node('a', 'j'), node('b', 'j')], jobs: [job('j')] });
    b.add({ at: 1000, nodes: [node('a', 'j', { tasksDone: 10 }), node('b', 'j', { tasksDone: 5 })], jobs: [job('j')] });
    // b left; a's counter restarted (it left and rejoined the job between ticks).
    const s = b.add({ at: 2000, nodes: [node('a', 'j', { tasksDone: 3 })], jobs: [job('j')] });
    assert.equal(s.jobs[0]!.tasksDone, 18);
    assert.equal(s.point.nodes, 1);
    assert.equal(s.point.tasksPerSec, 9, '18 tasks over the 2 s window');
  });

  it('smooths rates over a window when ticks and publications alias', () => {
    const b = new SnapshotBuilder(600, 2_000);
    // A node completes 10 tasks/s and publishes every 200 ms; the monitor reads every 200 ms but
    // sometimes catches two publications in one tick and none in the next.
    const published = [0, 2, 4, 8, 8, 10, 14, 14, 16, 18, 22, 22, 24, 26, 28, 32, 32, 34, 36, 40];
    const rates = published.map((done, i) => b.add({ at: i * 200, nodes: [node('a', 'j', { tasksDone: done })], jobs: [job('j')] }).point.tasksPerSec);
    for (const r of rates.slice(11)) assert.ok(r >= 9 && r <= 11, `steady rate near 10/s, got ${r} in ${rates.join(' ')}`);
  });

  it('reports the exact completions of a finished job and its incumbent while running', () => {
    const b = new SnapshotBuilder();
    let s = b.add({ at: 0, nodes: [node('a', 'j', { tasksDone: 2 })], jobs: [job('j', { bound: 120 })] });
    assert.deepEqual(s.point.incumbent, { j: 120 });
    s = b.add({ at: 1000, nodes: [node('a', null)], jobs: [job('j', { bound: 99 }, { status: 'done', value: 1, completions: 77, finishedAt: 1000 })] });
    assert.equal(s.jobs[0]!.state, 'done');
    assert.equal(s.jobs[0]!.tasksDone, 77);
    assert.deepEqual(s.point.incumbent, {}, 'finished jobs leave the incumbent chart');
    assert.equal(s.point.activeNodes, 0);
    // A search job's `incumbent` (its value, as the reader gives it) is charted too.
    s = b.add({ at: 2000, nodes: [node('a', 'k')], jobs: [job('k', { incumbent: 7 })] });
    assert.deepEqual(s.point.incumbent, { k: 7 });
  });

  it('an idle node shows no rate even while its window still holds its last job\'s work', () => {
    const b = new SnapshotBuilder(600, 2_000);
    b.add({ at: 0, nodes: [node('a', 'j')], jobs: [job('j')] });
    b.add({ at: 1000, nodes: [node('a', 'j', { tasksDone: 17 })], jobs: [job('j')] });
    const s = b.add({ at: 2000, nodes: [node('a', null)], jobs: [] });
    assert.equal(s.nodes[0]!.tasksPerSec, 0);
  });

  it('counts nodes per job, samples the kinds\' figures and passes on events that are new', () => {
    const b = new SnapshotBuilder();
    const spans = { tasks: [{ id: 't1', at: 10, end: 20 }] };
    let s = b.add({
      at: 1000,
      nodes: [node('a', 'j', { kind: 'workflow', figures: { 'tasks.done': 1 }, events: spans }), node('b', 'j', { kind: 'workflow' }), node('c', 'k'), node('d', null)],
      jobs: [job('j'), job('k')],
      sources: [{ name: 'manager.m', data: { lists: { rescales: [{ id: 'r1', at: 5, job: 'j', label: 'shrink' }] }, at: 1 } }],
    });
    assert.deepEqual(s.point.jobNodes, { j: 2, k: 1 });
    assert.deepEqual(s.events, [
      { origin: 'workflow', list: 'tasks', events: [{ id: 't1', at: 10, end: 20, lane: 'a', job: 'j' }] },
      { origin: 'manager.m', list: 'rescales', events: [{ id: 'r1', at: 5, job: 'j', label: 'shrink' }] },
    ]);
    s = b.add({ at: 2000, nodes: [node('a', 'j', { kind: 'workflow', figures: { 'tasks.done': 2 }, events: spans })], jobs: [job('j')] });
    assert.deepEqual(s.events, [], 'published again, not new');
    assert.deepEqual(b.figures(), [{ job: 'j', kind: 'workflow', samples: [{ t: 1000, nodes: { a: { 'tasks.done': 1 } } }, { t: 2000, nodes: { a: { 'tasks.done': 2 } } }] }]);
    assert.deepEqual(b.eventLists().map((l) => [l.origin, l.list, l.events.length]), [['workflow', 'tasks', 1], ['manager.m', 'rescales', 1]]);
  });

  it('bounds the timeline', () => {
    const b = new SnapshotBuilder(5);
    for (let t = 0; t < 12; t++) b.add({ at: t * 1000, nodes: [], jobs: [] });
    assert.deepEqual(b.history().map((p) => p.t), [7000, 8000, 9000, 10000, 11000]);
  });
});
