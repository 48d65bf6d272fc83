import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateNodeRange, type ClusterView, type JobState, type NodeState } from '../../../src/runtime/scheduler/cluster-view.js';
import { fcfsPolicy } from '../../../src/runtime/scheduler/fcfs-policy.js';
import { plan } from '../../../src/runtime/scheduler/planner.js';
import type { SchedulingPolicy } from '../../../src/runtime/scheduler/policy.js';

/** Hand-computed plans of the default policy. */

const idle = (...ids: string[]): NodeState[] => ids.map((id) => ({ id, assignment: '' }));
const on = (job: string, ...ids: string[]): NodeState[] => ids.map((id, i) => ({ id, assignment: job, assignedAt: i }));
function job(id: string, createdAt: number, over: Partial<JobState> = {}): JobState {
  return { id, createdAt, minNodes: 1, maxNodes: Infinity, desired: 1, finished: false, started: false, ...over };
}
const view = (nodes: NodeState[], jobs: JobState[]): ClusterView => ({ now: 100, nodes, jobs });
const sorted = (ds: { node: string; from: string; to: string }[]) => [...ds].sort((a, b) => a.node.localeCompare(b.node));

describe('scheduler planner (FCFS, hand-computed)', () => {
  const fcfs = fcfsPolicy();

  it('a job submitted while every node is busy waits; it starts once nodes are free', () => {
    const busy = view([...on('a', 'n1', 'n2')], [job('a', 1, { desired: 2, started: true }), job('b', 2, { desired: 2 })]);
    assert.deepEqual(plan(busy, fcfs), [], 'nothing to do while a holds every node');
    const aDone = view([...on('a', 'n1', 'n2')], [job('a', 1, { desired: 2, started: true, finished: true }), job('b', 2, { desired: 2 })]);
    assert.deepEqual(sorted(plan(aDone, fcfs)), [{ node: 'n1', from: 'a', to: '' }, { node: 'n2', from: 'a', to: '' }], 'a finished: its nodes are released first');
    const freed = view(idle('n1', 'n2'), [job('a', 1, { finished: true, started: true }), job('b', 2, { desired: 2 })]);
    assert.deepEqual(sorted(plan(freed, fcfs)), [{ node: 'n1', from: '', to: 'b' }, { node: 'n2', from: '', to: 'b' }]);
  });

  it('min gating: a waiting job starts only with minNodes at once, then gets up to desired', () => {
    const jobs = [job('big', 1, { minNodes: 3, desired: 4 })];
    assert.deepEqual(plan(view(idle('n1', 'n2'), jobs), fcfs), [], 'two idle nodes are not enough for min 3');
    assert.deepEqual(plan(view(idle('n1', 'n2', 'n3'), jobs), fcfs).map((d) => d.node), ['n1', 'n2', 'n3'], 'three start it');
    assert.equal(plan(view(idle('n1', 'n2', 'n3', 'n4', 'n5'), jobs), fcfs).length, 4, 'never more than desired');
  });

  it('strict FCFS: a waiting head blocks later waiting jobs; backfill lets them start', () => {
    const jobs = [job('head', 1, { minNodes: 3, desired: 3 }), job('small', 2, { desired: 1 })];
    const v = view(idle('n1', 'n2'), jobs);
    assert.deepEqual(plan(v, fcfs), [], 'small must not overtake the head');
    assert.deepEqual(plan(v, fcfsPolicy({ backfill: true })), [{ node: 'n1', from: '', to: 'small' }]);
  });

  it('order is (createdAt, id): equal times fall back to the id', () => {
    const v = view(idle('n1'), [job('z', 5), job('b', 5), job('a', 9)]);
    assert.deepEqual(plan(v, fcfs), [{ node: 'n1', from: '', to: 'b' }]);
  });

  it('a running job whose node crashed is topped up from idle nodes, even below its min', () => {
    // c started with min 3; one node crashed (gone from the view): it gets a replacement, not a new start.
    const v = view([...on('c', 'n1', 'n2'), ...idle('n9')], [job('c', 1, { minNodes: 3, desired: 3, started: true })]);
    assert.deepEqual(plan(v, fcfs), [{ node: 'n9', from: '', to: 'c' }]);
    // A job whose every node crashed is still started: one idle node is enough to resume it.
    const all = view(idle('n9'), [job('c', 1, { minNodes: 3, desired: 3, started: true })]);
    assert.deepEqual(plan(all, fcfs), [{ node: 'n9', from: '', to: 'c' }]);
  });

  it('running jobs are topped up even behind a blocked head', () => {
    const v = view([...on('late', 'n1'), ...idle('n2')], [job('head', 1, { minNodes: 4, desired: 4 }), job('late', 2, { desired: 2, started: true })]);
    assert.deepEqual(plan(v, fcfs), [{ node: 'n2', from: '', to: 'late' }]);
  });

  it('maxNodes caps desired; surplus is released newest first', () => {
    const v = view([...on('m', 'n1', 'n2', 'n3', 'n4'), ...idle('n5')], [job('m', 1, { maxNodes: 2, desired: 10, started: true })]);
    assert.deepEqual(sorted(plan(v, fcfs)), [{ node: 'n3', from: 'm', to: '' }, { node: 'n4', from: 'm', to: '' }]);
    const shrink = view(on('m', 'n1', 'n2', 'n3'), [job('m', 1, { desired: 1, started: true })]);
    assert.deepEqual(sorted(plan(shrink, fcfs)), [{ node: 'n2', from: 'm', to: '' }, { node: 'n3', from: 'm', to: '' }]);
  });

  it('desired is clamped into [min, max]', () => {
    const v = view(idle('n1', 'n2', 'n3', 'n4'), [job('d', 1, { minNodes: 2, maxNodes: 3, desired: 0 })]);
    assert.equal(plan(v, fcfs).length, 2, 'desired 0 is raised to min 2');
    const w = view(idle('n1', 'n2', 'n3', 'n4'), [job('d', 1, { minNodes: 2, maxNodes: 3, desired: 50 })]);
    assert.equal(plan(w, fcfs).length, 3, 'desired 50 is cut to max 3');
  });

  it('nodes of finished and unknown jobs are released; a released node is not reassigned in the same plan', () => {
    const v = view([...on('gone', 'n1'), ...on('f', 'n2')], [job('f', 1, { finished: true, started: true }), job('w', 2)]);
    assert.deepEqual(sorted(plan(v, fcfs)), [{ node: 'n1', from: 'gone', to: '' }, { node: 'n2', from: 'f', to: '' }]);
  });

  it('the mechanism keeps the hard rules whatever a policy asks', () => {
    const greedy: SchedulingPolicy = { name: 'greedy', targets: (v) => new Map(v.jobs.map((j) => [j.id, 100])) };
    const v = view([...on('f', 'n0'), ...idle('n1', 'n2', 'n3')], [job('f', 0, { finished: true, started: true }), job('x', 1, { maxNodes: 2 }), job('y', 2, { minNodes: 2 }), job('z', 3)]);
    const ds = plan(v, greedy);
    assert.deepEqual(sorted(ds), [{ node: 'n0', from: 'f', to: '' }, { node: 'n1', from: '', to: 'x' }, { node: 'n2', from: '', to: 'x' }, { node: 'n3', from: '', to: 'z' }],
      'x capped at its max, y (min 2) not started on the single node left, z gets it; the finished job gets nothing');
    const silent: SchedulingPolicy = { name: 'silent', targets: () => new Map() };
    assert.deepEqual(plan(view(on('x', 'n1', 'n2'), [job('x', 1, { desired: 1, started: true })]), silent), [], 'a job the policy leaves out keeps its nodes');
  });

  it('rejects a view that lists a node twice', () => {
    assert.throws(() => plan(view([...idle('n1'), ...on('a', 'n1')], [job('a', 1)]), fcfs), /node n1 appears twice/);
  });

  it('validates node ranges on submission with messages naming the problem', () => {
    assert.throws(() => validateNodeRange({ minNodes: -1 }), /minNodes must be a whole number ≥ 0, got -1/);
    assert.throws(() => validateNodeRange({ minNodes: 0.5 }), /minNodes must be a whole number ≥ 0, got 0.5/);
    validateNodeRange({ minNodes: 0, nodes: 0 }); // a task pool may wait with no nodes
    assert.throws(() => validateNodeRange({ maxNodes: 1.5 }), /maxNodes must be a whole number/);
    assert.throws(() => validateNodeRange({ minNodes: 3, maxNodes: 2 }), /minNodes \(3\) exceeds maxNodes \(2\)/);
    assert.throws(() => validateNodeRange({ minNodes: 2, nodes: 1 }), /nodes \(1\) must lie between minNodes \(2\) and maxNodes \(Infinity\)/);
    validateNodeRange({ minNodes: 2, maxNodes: Infinity, nodes: 5 });
  });
});
