import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SplitPhaseExecutor } from '../../../../src/frameworks/malleable/manager/split-phase-executor.js';

/** Algorithm 1's cases, by hand, on a clock the test moves. */
function setup(holding: Record<string, string[]>) {
  let now = 0;
  const pairs = Object.entries(holding).flatMap(([job, nodes]) => nodes.map((n) => [n, job] as const));
  const ex = new SplitPhaseExecutor(() => now, pairs);
  return { ex, tick: (ms: number) => (now += ms), actual: () => Object.fromEntries([...ex.actualMap()].sort()), sched: () => Object.fromEntries([...ex.schedMap()].sort()) };
}

describe('split-phase execution (Algorithm 1)', () => {
  it('shrink-then-launch: the shrink is sent at once, the launch waits for its acknowledgement', () => {
    const { ex, tick, actual, sched } = setup({ A: ['n0', 'n1', 'n2', 'n3'] });
    const shrink = { type: 'shrink' as const, job: 'A', nodes: ['n0', 'n1'], removed: ['n2', 'n3'] };
    const launch = { type: 'launch' as const, job: 'B', nodes: ['n2', 'n3'] };
    assert.deepEqual(ex.execute([shrink, launch]), [shrink]);
    assert.deepEqual(sched(), { n0: 'A', n1: 'A', n2: 'B', n3: 'B' }, 'the scheduler already sees the new plan');
    assert.deepEqual(actual(), { n0: 'A', n1: 'A', n2: 'A', n3: 'A' }, 'A still holds n2 and n3');
    assert.ok(ex.isBusy('A') && ex.isBusy('B'));
    tick(3000);
    assert.deepEqual(ex.shrinkAcknowledged('A', ['n0', 'n1']), [launch]);
    assert.deepEqual(actual(), { n0: 'A', n1: 'A', n2: 'B', n3: 'B' });
    assert.ok(!ex.isBusy('A') && !ex.isBusy('B'));
    assert.equal(ex.lastChangeAt('A'), 3000);
    assert.deepEqual(ex.events.map((e) => `${e.at} ${e.type} ${e.job}`), ['0 shrink-sent A', '0 deferred B', '3000 shrink-acked A', '3000 launch B']);
  });

  it('shrink-then-expand: another job grows onto the shrunk nodes only after the acknowledgement', () => {
    const { ex, actual } = setup({ A: ['n0', 'n1', 'n2', 'n3'], B: ['n4', 'n5'] });
    const shrink = { type: 'shrink' as const, job: 'A', nodes: ['n0', 'n1'], removed: ['n2', 'n3'] };
    const expand = { type: 'expand' as const, job: 'B', nodes: ['n2', 'n3', 'n4', 'n5'], added: ['n2', 'n3'] };
    assert.deepEqual(ex.execute([shrink, expand]), [shrink]);
    assert.deepEqual(ex.shrinkAcknowledged('B', ['n4']), [], 'an acknowledgement for a job with no shrink under way is ignored');
    assert.deepEqual(ex.shrinkAcknowledged('A', ['n0', 'n1']), [expand]);
    assert.deepEqual(actual(), { n0: 'A', n1: 'A', n2: 'B', n3: 'B', n4: 'B', n5: 'B' });
  });

  it('independent decisions run at once; only the dependent one waits', () => {
    const { ex, actual } = setup({ A: ['n0', 'n1', 'n2', 'n3'] });
    const shrink = { type: 'shrink' as const, job: 'A', nodes: ['n0', 'n1', 'n2'], removed: ['n3'] };
    const launchFree = { type: 'launch' as const, job: 'B', nodes: ['n4', 'n5'] };
    const launchDep = { type: 'launch' as const, job: 'C', nodes: ['n3'] };
    assert.deepEqual(ex.execute([shrink, launchFree, launchDep]), [shrink, launchFree]);
    assert.deepEqual(actual(), { n0: 'A', n1: 'A', n2: 'A', n3: 'A', n4: 'B', n5: 'B' });
    assert.deepEqual(ex.waiting(), [launchDep]);
    assert.deepEqual(ex.shrinkAcknowledged('A', ['n0', 'n1', 'n2']), [launchDep]);
  });

  it('a job that keeps a released node keeps it; the launch that waited for it is dropped and re-planned', () => {
    const { ex, actual, sched } = setup({ A: ['n0', 'n1', 'n2', 'n3'] });
    ex.execute([{ type: 'shrink', job: 'A', nodes: ['n0', 'n1'], removed: ['n2', 'n3'] }, { type: 'launch', job: 'B', nodes: ['n2', 'n3'] }]);
    assert.deepEqual(ex.shrinkAcknowledged('A', ['n0', 'n1', 'n2']), []);
    assert.deepEqual(actual(), { n0: 'A', n1: 'A', n2: 'A' });
    assert.deepEqual(sched(), { n0: 'A', n1: 'A', n2: 'A' });
    assert.ok(!ex.isBusy('B'));
    assert.deepEqual(ex.events.at(-2)?.type, 'dropped');
  });

  it('a finished job frees its nodes and voids its own pending actions; a lost node drops a launch waiting for it', () => {
    const { ex, actual } = setup({ A: ['n0', 'n1'], B: ['n2'] });
    ex.execute([{ type: 'shrink', job: 'A', nodes: ['n0'], removed: ['n1'] }, { type: 'expand', job: 'B', nodes: ['n1', 'n2'], added: ['n1'] }]);
    assert.deepEqual(ex.jobFinished('A'), [{ type: 'expand', job: 'B', nodes: ['n1', 'n2'], added: ['n1'] }], 'A ended before acknowledging: n1 is free');
    assert.deepEqual(actual(), { n1: 'B', n2: 'B' });
    const { ex: ex2, sched } = setup({ A: ['n0', 'n1'] });
    ex2.execute([{ type: 'shrink', job: 'A', nodes: ['n0'], removed: ['n1'] }, { type: 'launch', job: 'C', nodes: ['n1'] }]);
    assert.deepEqual(ex2.nodeLost('n1'), []);
    assert.deepEqual(sched(), { n0: 'A' });
    assert.ok(!ex2.isBusy('C'));
    assert.throws(() => ex2.execute([{ type: 'expand', job: 'A', nodes: ['n0', 'n5'], added: ['n5'] }]), /under way/);
  });
});

describe('unacknowledged launch and expand requests', () => {
  it('a job told of a launch or expand is busy until it acknowledges, so no shrink overtakes the request', () => {
    const { ex } = setup({ A: ['n0', 'n1'] });
    ex.requestSent('A');
    assert.ok(ex.isBusy('A'));
    assert.throws(() => ex.execute([{ type: 'shrink', job: 'A', nodes: ['n0'], removed: ['n1'] }]), /under way/);
    ex.requestAcknowledged('A');
    assert.ok(!ex.isBusy('A'));
    ex.requestSent('A');
    ex.jobFinished('A');
    assert.ok(!ex.isBusy('A'), 'a finished job is busy no more');
  });
});
