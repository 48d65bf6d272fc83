/**
 * The malleable job kind on four node processes over a real 3-server ZooKeeper ensemble and TCP:
 * Stencil2D expands 2 → 4 and shrinks 4 → 2 at sync points (the nodes let go leave the job), then a
 * member is killed with SIGKILL and the job rolls back to its last checkpoint on the remaining
 * nodes — and the result is bit-identical to a plain sequential Jacobi.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GridResult } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableProgress, rescaleMalleable, submitMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/cluster.js';
import { jobLeader, requestJob } from '../../../src/runtime/job-control.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import { plainStencil } from './plain-grids.js';

const STENCIL = { module: new URL('../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };

describe('malleable jobs on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    const secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: 4 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('expand 2 → 4, shrink 4 → 2, SIGKILL of a member and rollback: bit-identical', { timeout: 240_000 }, async () => {
    const cluster = await Cluster.connect(zk.connectionString);
    const params = { grid: 64, blocks: 4, iterations: 80 };
    const pausedAt = (job: string, iteration: number) =>
      waitFor(async () => (await malleableProgress(cluster.coordination, job).catch(() => undefined))?.iteration === iteration, `job at iteration ${iteration}`, 90_000);
    try {
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 4, 'four idle nodes', 60_000);
      const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 2, runtime: { checkpointEvery: 10, pauseAt: [10, 30, 50] } });
      await pausedAt(job.id, 10);
      const expand = await rescaleMalleable(cluster.coordination, job.id, 4);
      assert.equal(expand.kind, 'expand');
      assert.equal(expand.nodes.length, 4);
      await requestJob(cluster.coordination, job.id, 'resume');

      await pausedAt(job.id, 30);
      const leader = await jobLeader(cluster.coordination, job.id);
      const shrink = await rescaleMalleable(cluster.coordination, job.id, 2);
      assert.equal(shrink.kind, 'shrink');
      assert.ok(shrink.nodes.includes(leader!));
      const gone = expand.nodes.filter((n) => !shrink.nodes.includes(n));
      await waitFor(async () => (await cluster.nodes()).filter((n) => gone.includes(n.id)).every((n) => n.job === null), 'the released nodes to leave the job', 30_000);
      await requestJob(cluster.coordination, job.id, 'resume');

      await pausedAt(job.id, 50);
      const victim = processes.find((p) => shrink.nodes.includes(p.id) && p.id !== leader)!;
      victim.kill('SIGKILL');
      await victim.exited;
      await requestJob(cluster.coordination, job.id, 'resume');
      const { result, stats } = await withDeadline(job.result(), 'the result', 120_000);
      assert.equal(result.checksum, plainStencil(64, 80, 4).checksum, 'bit-identical to the sequential run');
      assert.ok(stats.rollbacks >= 1, 'rolled back after the SIGKILL');
      assert.ok(stats.rescales.length >= 2);
    } finally {
      await cluster.close();
    }
  });
});
