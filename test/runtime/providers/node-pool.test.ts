/** The provider's node states under simulated time: every transition, timeout and backoff, as instructions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodePool, type PoolInstruction } from '../../../src/runtime/providers/node-pool.js';

const SPEC = { zk: 'zk://10.0.0.5:2181', workers: 2 };
const OPTS = { idPrefix: 'p', startTimeoutMs: 10_000, releaseTimeoutMs: 5_000, killTimeoutMs: 2_000, retryBaseMs: 1_000, retryMaxMs: 8_000 };

/** The instructions that are not reports. */
const actions = (out: PoolInstruction[]) => out.filter((i) => i.type !== 'report');
const states = (out: PoolInstruction[]) => out.flatMap((i) => (i.type === 'report' && i.event.type === 'state' ? [`${i.event.node}:${i.event.state}`] : []));
const stateOf = (pool: NodePool, id: string) => pool.nodes().find((n) => n.id === id)?.state;

describe('node pool (provider states)', () => {
  it('requested → starting → joined → releasing → released, with start and stop instructions', () => {
    const pool = new NodePool(OPTS);
    const { nodes, instructions } = pool.provision(2, SPEC, 0);
    assert.deepEqual(nodes.map((n) => [n.id, n.state]), [['p-1', 'requested'], ['p-2', 'requested']]);
    assert.deepEqual(actions(instructions), [{ type: 'start', id: 'p-1', spec: SPEC }, { type: 'start', id: 'p-2', spec: SPEC }]);
    assert.deepEqual(states(pool.launched('p-1', 'pid 11', 100)), ['p-1:starting']);
    assert.deepEqual(states(pool.seen([{ id: 'p-1', assignment: '' }, { id: 'other', assignment: '' }], 200)), ['p-1:joined']);
    assert.equal(pool.nodes()[0]!.where, 'pid 11');
    assert.equal(pool.nodes()[0]!.idleSince, 200);
    const release = pool.release(['p-1', 'unknown'], 300);
    assert.deepEqual(actions(release), [{ type: 'stop', id: 'p-1', force: false }]);
    assert.deepEqual(states(release), ['p-1:releasing']);
    assert.deepEqual(states(pool.ended('p-1', 'exit 0', 400)), ['p-1:released']);
    assert.deepEqual(pool.active().map((n) => n.id), ['p-2']);
  });

  it('a node released before it was launched is stopped once launched', () => {
    const pool = new NodePool(OPTS);
    pool.provision(1, SPEC, 0);
    assert.deepEqual(actions(pool.release(['p-1'], 10)), [], 'nothing to stop yet');
    assert.deepEqual(actions(pool.launched('p-1', 'pid 5', 20)), [{ type: 'stop', id: 'p-1', force: false }]);
    assert.deepEqual(states(pool.ended('p-1', 'exit 0', 30)), ['p-1:released']);
  });

  it('tracks idleness: idle since first seen idle, reset by an assignment', () => {
    const pool = new NodePool(OPTS);
    pool.provision(1, SPEC, 0);
    pool.launched('p-1', 'pid 1', 0);
    pool.seen([{ id: 'p-1', assignment: '' }], 100);
    pool.seen([{ id: 'p-1', assignment: '' }], 500);
    assert.equal(pool.nodes()[0]!.idleSince, 100);
    pool.seen([{ id: 'p-1', assignment: 'job-a' }], 600);
    assert.equal(pool.nodes()[0]!.idleSince, undefined);
    pool.seen([{ id: 'p-1', assignment: '' }], 900);
    assert.equal(pool.nodes()[0]!.idleSince, 900);
  });

  it('fails a node that does not join in time, kills it, and backs off further starts', () => {
    const pool = new NodePool(OPTS);
    pool.provision(1, SPEC, 0);
    pool.launched('p-1', 'host-b (pid 9)', 50);
    assert.deepEqual(pool.tick(9_999), []);
    const out = pool.tick(10_000);
    assert.deepEqual(actions(out), [{ type: 'stop', id: 'p-1', force: true }]);
    const failed = pool.nodes()[0]!;
    assert.equal(failed.state, 'failed');
    assert.equal(failed.error, 'did not join the cluster within 10 s (host-b (pid 9))');
    assert.deepEqual(out.find((i) => i.type === 'report' && i.event.type === 'retry'), { type: 'report', event: { type: 'retry', after: 11_000, failures: 1 } });
    // Its end afterwards changes nothing.
    assert.deepEqual(pool.ended('p-1', 'SIGKILL', 10_100), []);
    assert.equal(stateOf(pool, 'p-1'), 'failed');
  });

  it('counts consecutive start failures with a doubling, capped backoff; a join resets it', () => {
    const pool = new NodePool(OPTS);
    let t = 0;
    const allowed: number[] = [];
    for (let i = 1; i <= 5; i++) {
      pool.provision(1, SPEC, t);
      pool.launchFailed(`p-${i}`, 'ssh: connect to host n3 port 22: No route to host', t);
      allowed.push(pool.startAllowedAt() - t);
      t += 100;
    }
    assert.deepEqual(allowed, [1_000, 2_000, 4_000, 8_000, 8_000]);
    assert.equal(pool.nodes()[0]!.error, 'could not be started: ssh: connect to host n3 port 22: No route to host');
    pool.provision(1, SPEC, t);
    pool.launched('p-6', 'pid 3', t);
    pool.seen([{ id: 'p-6', assignment: '' }], t);
    assert.equal(pool.consecutiveFailures, 0);
    assert.equal(pool.startAllowedAt(), -Infinity);
  });

  it('a node that ends before joining fails; one that ends after joining fails without counting as a start failure', () => {
    const pool = new NodePool(OPTS);
    pool.provision(2, SPEC, 0);
    pool.launched('p-1', 'pid 1', 0);
    pool.launched('p-2', 'pid 2', 0);
    pool.ended('p-1', 'exit 2: error: --zk is required', 10);
    assert.equal(pool.nodes()[0]!.error, 'ended before it joined the cluster (exit 2: error: --zk is required)');
    assert.equal(pool.consecutiveFailures, 1);
    pool.seen([{ id: 'p-2', assignment: 'j' }], 20);
    pool.ended('p-2', 'exit 3', 30);
    assert.equal(stateOf(pool, 'p-2'), 'failed');
    assert.equal(pool.consecutiveFailures, 0);
  });

  it('kills a node that does not stop after its release, and fails it if even that does not work', () => {
    const pool = new NodePool(OPTS);
    pool.provision(1, SPEC, 0);
    pool.launched('p-1', 'slurm job 7', 0);
    pool.seen([{ id: 'p-1', assignment: '' }], 0);
    pool.release(['p-1'], 1_000);
    assert.equal(pool.nextDeadline(), 6_000);
    assert.deepEqual(actions(pool.tick(6_000)), [{ type: 'stop', id: 'p-1', force: true }]);
    assert.equal(stateOf(pool, 'p-1'), 'releasing');
    const out = pool.tick(8_000);
    assert.deepEqual(states(out), ['p-1:failed']);
    assert.equal(pool.nodes()[0]!.error, 'would not stop: still running 7 s after it was released (slurm job 7)');
    assert.equal(pool.nextDeadline(), undefined);
  });

  it('keeps a bounded history of released and failed nodes', () => {
    const pool = new NodePool({ ...OPTS, history: 3 });
    for (let i = 1; i <= 6; i++) {
      pool.provision(1, SPEC, i);
      pool.launchFailed(`p-${i}`, 'no', i);
    }
    pool.provision(1, SPEC, 10);
    assert.deepEqual(pool.nodes().map((n) => n.id), ['p-4', 'p-5', 'p-6', 'p-7']);
  });
});
