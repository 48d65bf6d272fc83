/**
 * A job's pool memory budget (pool/pool-budget.ts, JobOptions.poolMemoryBytes): the reckoning itself,
 * then on a real ZooKeeper with a `tidepool node` process — a fan of 5,000 spawned tasks under a 16 KiB
 * budget fails with a message naming the budget, the job and the node (the node stays up and runs the
 * next job), and the same fan under a budget it fits finishes with every task counted. A budget that is
 * not a number of bytes is refused at submission, naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { POOL_TASK_BYTES, PoolBudget } from '../../src/runtime/pool/pool-budget.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const FAN: TaskRef = { module: new URL('./apps/sleepy-fan.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 180_000 };
const FANOUT = 5_000;

describe('pool memory budget: the reckoning', () => {
  it('admits tasks while held × (fixed cost + mean encoded state) fits, and names the budget, job and node when not', () => {
    const budget = new PoolBudget(100 * POOL_TASK_BYTES, 'j-b', 'n-1');
    assert.equal(budget.admit(0, 50, 0), undefined);
    assert.equal(budget.admit(50, 50, 0), undefined, 'exactly the budget');
    const refused = budget.admit(100, 1, 0);
    assert.match(refused!, /^job j-b: node n-1's task pool would hold 101 tasks, about 51712 bytes \(512 bytes a task\), over the job's pool memory budget of 51200 bytes \(poolMemoryBytes\)/);
    // States of 512 encoded bytes each double what a task is reckoned at.
    const withStates = new PoolBudget(100 * POOL_TASK_BYTES, 'j-c', 'n-1');
    assert.equal(withStates.admit(0, 50, 50 * 512), undefined);
    assert.match(withStates.admit(50, 1, undefined)!, /51 tasks, about 52224 bytes \(1024 bytes a task\)/);
  });
});

describe('pool memory budget on a node process', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  let node: NodeProcess;
  const secret = secretFile();
  before(async () => {
    zk = await startEnsemble({ size: 1 });
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
    node = await startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 });
  });
  after(async () => {
    node.kill('SIGKILL');
    await node.exited;
    await client.close();
    await zk.stop();
  });

  const fan = (poolMemoryBytes: number) => submitJob(client, {
    ...taskPoolJob(FAN, { fanout: FANOUT, spin: 10, root: true }, undefined, { poolMemoryBytes }), nodes: 1, secret: secretIn(secret),
  });

  it('a fan that outgrows its budget fails naming the budget, the job and the node; the node runs the next job', T, async () => {
    const spec = await fan(16 * 1024);
    const outcome = await awaitOutcome(client, spec.id);
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
    assert.match(outcome.status === 'failed' ? outcome.error : '', new RegExp(`^job ${spec.id}: node ${node.id}'s task pool would hold \\d+ tasks, about \\d+ bytes \\(\\d+ bytes a task\\), over the job's pool memory budget of 16384 bytes \\(poolMemoryBytes\\)`));
    assert.equal(node.process.exitCode, null, 'the node is up');
    const fits = await fan(64 * 1024 * 1024);
    const done = await awaitOutcome(client, fits.id);
    assert.deepEqual(done.status === 'done' ? done.value : done, FANOUT + 1, 'every task of the fan counted under a budget it fits');
  });

  it('a budget that is not a number of bytes is refused at submission, naming the field', T, async () => {
    await assert.rejects(fan(-1), /poolMemoryBytes must be a whole number of bytes ≥ 512 \(one task's share\), not -1/);
    await assert.rejects(fan(1.5), /poolMemoryBytes must be a whole number of bytes/);
  });
});
