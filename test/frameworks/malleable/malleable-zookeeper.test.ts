/**
 * The malleable job kind on four node processes over a real 3-server ZooKeeper ensemble and TCP:
 * Stencil2D shrinks 2 → 1, expands 1 → 4, vacates a node given notice (a spot interruption) and
 * shrinks 3 → 2 at sync points (the nodes let go leave the job), then a member is killed with
 * SIGKILL and the job rolls back to its last checkpoint on the remaining nodes — and the result is
 * bit-identical to a plain sequential Jacobi.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GridResult } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableProgress, rescaleMalleable, submitMalleable, vacateMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { plainStencil } from './plain-grids.js';

const STENCIL = { module: new URL('../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };

describe('malleable jobs on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  const processes: NodeProcess[] = [];
  const secret = secretFile();

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    processes.push(...await Promise.all(Array.from({ length: 4 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('shrink 2 → 1, expand 1 → 4, vacate of a node given notice, shrink 3 → 2, SIGKILL of a member and rollback: bit-identical', { timeout: 240_000 }, async () => {
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    const params = { grid: 64, blocks: 4, iterations: 80 };
    const pausedAt = (job: string, iteration: number) =>
      waitFor(async () => (await malleableProgress(cluster.coordination, job).catch(() => undefined))?.iteration === iteration, `job at iteration ${iteration}`, 90_000);
    const left = (job: string, gone: string[]) =>
      waitFor(async () => (await cluster.nodes()).filter((n) => gone.includes(n.id)).every((n) => n.job !== job), `${gone.join(' ')} to leave the job`, 60_000);
    try {
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 4, 'four idle nodes', 60_000);
      const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 2, runtime: { checkpointEvery: 10, pauseAt: [10, 20, 30, 50] } });
      await pausedAt(job.id, 10);
      const leader = (await jobLeader(cluster.coordination, job.id))!;
      const toOne = await rescaleMalleable(cluster.coordination, job.id, 1);
      assert.deepEqual([toOne.kind, toOne.nodes], ['shrink', [leader]]);
      await left(job.id, processes.map((p) => p.id).filter((id) => id !== leader));
      await requestJob(cluster.coordination, job.id, 'resume');

      await pausedAt(job.id, 20);
      const expand = await rescaleMalleable(cluster.coordination, job.id, 4);
      assert.deepEqual([expand.kind, expand.nodes.length], ['expand', 4]);
      await requestJob(cluster.coordination, job.id, 'resume');

      await pausedAt(job.id, 30);
      // A spot instance's termination notice: the job vacates that node, which then holds nothing of it.
      const spot = expand.nodes.find((n) => n !== leader)!;
      const vacate = await vacateMalleable(cluster.coordination, job.id, spot);
      assert.deepEqual([vacate.kind, vacate.nodes.length, vacate.nodes.includes(spot)], ['shrink', 3, false]);
      await left(job.id, [spot]);
      const shrink = await rescaleMalleable(cluster.coordination, job.id, 2);
      assert.deepEqual([shrink.kind, shrink.nodes.length, shrink.nodes.includes(leader)], ['shrink', 2, true]);
      await left(job.id, vacate.nodes.filter((n) => !shrink.nodes.includes(n)));
      await requestJob(cluster.coordination, job.id, 'resume');

      await pausedAt(job.id, 50);
      const victim = processes.find((p) => shrink.nodes.includes(p.id) && p.id !== leader)!;
      victim.kill('SIGKILL');
      await victim.exited;
      await requestJob(cluster.coordination, job.id, 'resume');
      const { result, stats } = await withDeadline(job.result(), 'the result', 120_000);
      assert.equal(result.checksum, plainStencil(64, 80, 4).checksum, 'bit-identical to the sequential run');
      assert.ok(stats.rollbacks >= 1, 'rolled back after the SIGKILL');
      // (After the SIGKILL the scheduler may give the job an idle node in place of the dead one: an expand of its own.)
      assert.deepEqual(stats.rescales.filter((r) => r.kind !== 'none').slice(0, 4).map((r) => [r.kind, r.nodes.length]), [['shrink', 1], ['expand', 4], ['shrink', 3], ['shrink', 2]]);
      assert.deepEqual([stats.nodesPerIteration[9], stats.nodesPerIteration[10], stats.nodesPerIteration[20], stats.nodesPerIteration[30]], [2, 1, 4, 2]);
    } finally {
      await cluster.close();
    }
  });
});
