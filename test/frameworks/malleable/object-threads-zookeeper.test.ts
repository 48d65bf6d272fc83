/**
 * Objects on worker threads of `tidepool node` processes (two threads each) over a real ZooKeeper and
 * TCP: for each of Stencil2D, Wave2D, LeanMD and Lulesh, a job on two nodes loses one to SIGKILL,
 * rolls back to its last checkpoint on the node that remains (both of its threads) — and the result is
 * bit-identical to the sequential run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MALLEABLE_APPS } from '../../../src/frameworks/malleable/applications.js';
import { loadMalleableApp } from '../../../src/frameworks/malleable/malleable-app.js';
import { runSequential } from '../../../src/frameworks/malleable/sequential.js';
import { malleableProgress, submitMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';

const APPS: Array<{ app: string; params: unknown }> = [
  { app: 'stencil', params: { grid: 48, blocks: 4, iterations: 24 } },
  { app: 'wave', params: { grid: 40, blocks: 4, iterations: 24 } },
  { app: 'leanmd', params: { cells: [3, 3, 3], atomsPerSide: 2, steps: 8, dt: 0.01 } },
  { app: 'lulesh', params: { elements: 240, blocks: 6, steps: 12 } },
];

describe('objects on the worker threads of node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  let secret: string;
  const processes: NodeProcess[] = [];
  const killed = new Set<NodeProcess>();
  const start = async () => void processes.push(await startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 2 }));

  before(async () => {
    zk = await startEnsemble({ size: 1 });
    secret = secretFile();
    await Promise.all([start(), start()]);
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('a SIGKILL of one of two nodes: rollback to the last checkpoint on the other\'s two threads, the four applications bit-identical', { timeout: 400_000 }, async () => {
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      for (const { app, params } of APPS) {
        await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '' && n.job === null).length >= 2, 'two idle nodes', 60_000);
        const job = await submitMalleable(cluster, MALLEABLE_APPS[app]!, params, { nodes: 2, maxNodes: 2, runtime: { checkpointEvery: 6, pauseAt: [9] } });
        await waitFor(async () => (await malleableProgress(cluster.coordination, job.id).catch(() => undefined))?.iteration === 9, `${app} at iteration 9`, 90_000);
        const leader = await jobLeader(cluster.coordination, job.id);
        const victim = processes.find((p) => p.id !== leader && !killed.has(p))!;
        killed.add(victim);
        victim.kill('SIGKILL');
        await victim.exited;
        await requestJob(cluster.coordination, job.id, 'resume');
        const { result, stats } = await withDeadline(job.result(), `${app}'s result`, 120_000);
        assert.equal(JSON.stringify(result), JSON.stringify(runSequential(await loadMalleableApp(MALLEABLE_APPS[app]!), params)), `${app}: bit-identical after the rollback`);
        assert.ok(stats.rollbacks >= 1, `${app}: rolled back after the SIGKILL`);
        assert.ok(stats.nodesPerIteration.slice(6).every((n) => n === 1), `${app}: from the checkpoint at 6 on, one node ran it`);
        assert.ok(stats.threadsPerIteration.slice(6).every((n) => n === 2), `${app}: on both of its threads`);
        assert.ok(stats.threadsPerIteration.slice(0, 6).every((n) => n === 4), `${app}: before, on the two threads of each node`);
        await start();
      }
    } finally {
      await cluster.close();
    }
  });
});
