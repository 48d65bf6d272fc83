/**
 * The iterative kind on node processes over a real 3-server ZooKeeper ensemble and real TCP: a RUPER
 * job survives kill -9 of a member (its unreported blocks run again elsewhere) and, like a steal job
 * on the nodes left, gives the sequential result bit for bit with every iteration counted once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/cluster.js';
import { jobLeader, requestJob } from '../../../src/runtime/job-control.js';
import { iterateSequentially, submitIterative, type IterativeOptions } from '../../../src/frameworks/iterative/run-iterative.js';
import type { NodeFigures } from '../../../src/frameworks/iterative/figures.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import checksum, { type Checksum } from './apps/checksum.js';

const APP = { module: new URL('./apps/checksum.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 180_000 };
/** 192 blocks of 2 × 30 ms of sleep: about 4 s on three nodes whatever the load, time to kill one mid-run. */
const PARAMS = { work: 4, sleepMs: 30 };
const OPTS: IterativeOptions<{ work: number; sleepMs: number }> = {
  iterations: 19_200, params: PARAMS, blockSize: 100, chunkSize: 50, checkpointMs: 100,
  ruper: { checkpointInterval: 0.2, minRemaining: 0.05 },
};

function exact(value: Checksum, what: string) {
  const n = OPTS.iterations;
  assert.equal(value.count, n, `${what}: every iteration counted once`);
  assert.equal(value.indexSum, (n * (n - 1)) / 2, `${what}: index checksum`);
  assert.deepEqual(value, iterateSequentially(checksum, OPTS).value, `${what}: bit-identical to the sequential fold`);
}

describe('iterative jobs on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    const secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: 3 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('ruper: kill -9 of a member mid-run loses and doubles nothing', T, async () => {
    const cluster = await Cluster.connect(zk.connectionString);
    try {
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 3, 'three idle nodes', 60_000);
      const job = await submitIterative(cluster, APP, { ...OPTS, balance: 'ruper', nodes: 3 });
      let ended = false;
      void job.outcome().then(() => (ended = true));
      let figures: NodeFigures[] = [];
      await waitFor(async () => {
        figures = (await requestJob(cluster.coordination, job.id, 'figures', null, { timeoutMs: 10_000 }).catch(() => [])) as NodeFigures[];
        return figures.length === 3 && figures.every((f) => f.done > 0);
      }, 'all three nodes to run iterations', 90_000);
      const leader = await jobLeader(cluster.coordination, job.id);
      const victim = processes.find((p) => p.id !== leader)!;
      assert.equal(ended, false, 'the job is still running when the member is killed');
      victim.kill('SIGKILL');
      await victim.exited;
      processes.splice(processes.indexOf(victim), 1);
      const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), 'the result', 120_000);
      assert.equal(r.n, OPTS.iterations);
      exact(r.v, 'ruper with a member killed');
    } finally {
      await cluster.close();
    }
  });

  it('steal and static on the two nodes left give the same bits', T, async () => {
    const cluster = await Cluster.connect(zk.connectionString);
    try {
      for (const balance of ['steal', 'static'] as const) {
        await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 2, 'two idle nodes', 60_000);
        const job = await submitIterative(cluster, APP, { ...OPTS, params: { ...PARAMS, sleepMs: 0 }, balance, nodes: 2 });
        const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), `the ${balance} result`, 120_000);
        const value = r.v;
        assert.equal(value.count, OPTS.iterations);
        assert.deepEqual(value, iterateSequentially(checksum, { ...OPTS, params: { ...PARAMS, sleepMs: 0 } }).value, `${balance}: bit-identical`);
      }
    } finally {
      await cluster.close();
    }
  });
});
