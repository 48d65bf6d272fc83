/** When a provider is asked for nodes and which of its nodes it gives back: hand-computed cases. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterView, Decision, JobState } from '../../../src/runtime/scheduler/cluster-view.js';
import type { ProvisionedNode } from '../../../src/runtime/providers/node-provider.js';
import { nextIdleExpiry, scaleDecision } from '../../../src/runtime/providers/scale-demand.js';

const job = (id: string, desired: number, more: Partial<JobState> = {}): JobState => ({ id, createdAt: 1, minNodes: 1, maxNodes: Infinity, desired, finished: false, started: false, ...more });
const view = (nodes: Array<[string, string]>, jobs: JobState[]): ClusterView => ({ now: 0, nodes: nodes.map(([id, assignment]) => ({ id, assignment })), jobs });
const joined = (id: string, idleSince?: number): ProvisionedNode => ({ id, state: 'joined', since: 0, ...(idleSince !== undefined ? { idleSince } : {}) });
const OPTS = { maxNodes: 4, idleMs: 1_000 };

describe('scale demand', () => {
  it('asks for what waiting jobs lack beyond idle and starting nodes, up to maxNodes', () => {
    // A job wants 3 and has nothing; one idle node will go to it by the plan: 2 to provision.
    const v = view([['a', '']], [job('j', 3)]);
    const plan: Decision[] = [{ node: 'a', from: '', to: 'j' }];
    assert.deepEqual(scaleDecision(v, plan, [], 0, -Infinity, OPTS), { provision: 2, release: [], lacking: 2 });
    // Nodes already starting count.
    const starting: ProvisionedNode[] = [{ id: 'p-1', state: 'starting', since: 0 }];
    assert.equal(scaleDecision(v, plan, starting, 0, -Infinity, OPTS).provision, 1);
    // maxNodes bounds everything the provider holds (releasing nodes too).
    const holding: ProvisionedNode[] = [joined('p-1'), joined('p-2'), { id: 'p-3', state: 'releasing', since: 0 }, { id: 'p-4', state: 'failed', since: 0 }];
    const busy = view([['p-1', 'k'], ['p-2', 'k']], [job('k', 2, { started: true }), job('j', 2)]);
    assert.deepEqual(scaleDecision(busy, [], holding, 0, -Infinity, OPTS), { provision: 1, release: [], lacking: 2 });
  });

  it('counts a job that cannot start yet for all of its minNodes, and never beyond maxNodes', () => {
    // minNodes 3 and one idle node: the plan gives it nothing; 2 more are needed.
    const v = view([['a', '']], [job('j', 3, { minNodes: 3 })]);
    assert.equal(scaleDecision(v, [], [], 0, -Infinity, OPTS).provision, 2);
    const capped = view([], [job('j', 10, { maxNodes: 2 })]);
    assert.equal(scaleDecision(capped, [], [], 0, -Infinity, { ...OPTS, maxNodes: 100 }).provision, 2);
  });

  it('leaves jobs placed by a resource manager and finished jobs out', () => {
    const v = view([], [job('ext', 5, { external: true }), job('done', 5, { finished: true })]);
    assert.deepEqual(scaleDecision(v, [], [], 0, -Infinity, OPTS), { provision: 0, release: [], lacking: 0 });
  });

  it('waits for the backoff after failed starts', () => {
    const v = view([], [job('j', 2)]);
    assert.equal(scaleDecision(v, [], [], 500, 1_000, OPTS).provision, 0);
    assert.equal(scaleDecision(v, [], [], 1_000, 1_000, OPTS).provision, 2);
  });

  it('releases provided nodes idle for idleMs, oldest idle first, keeping minNodes, only while no job lacks nodes', () => {
    const provided = [joined('p-1', 100), joined('p-2', 0), joined('p-3', 900), joined('p-4')];
    const v = view([['p-1', ''], ['p-2', ''], ['p-3', ''], ['p-4', 'j'], ['own', '']], [job('j', 1, { started: true })]);
    assert.deepEqual(scaleDecision(v, [], provided, 1_100, -Infinity, OPTS).release, ['p-2', 'p-1']);
    assert.deepEqual(scaleDecision(v, [], provided, 1_100, -Infinity, { ...OPTS, minNodes: 3 }).release, ['p-2']);
    // A waiting job will take idle nodes: nothing is released.
    const waiting = view([['p-1', ''], ['p-2', '']], [job('w', 5)]);
    assert.deepEqual(scaleDecision(waiting, [], provided, 5_000, -Infinity, { ...OPTS, maxNodes: 4 }).release, []);
    // An idle node the plan assigns now is not released.
    const assigned = view([['p-2', '']], [job('k', 1)]);
    assert.deepEqual(scaleDecision(assigned, [{ node: 'p-2', from: '', to: 'k' }], [joined('p-2', 0)], 5_000, -Infinity, OPTS).release, []);
  });

  it('says when the next idle node may be released', () => {
    assert.equal(nextIdleExpiry([joined('a', 300), joined('b', 100), joined('c'), { id: 'd', state: 'releasing', since: 0, idleSince: 0 }], 1_000), 1_100);
    assert.equal(nextIdleExpiry([joined('c')], 1_000), undefined);
  });
});
