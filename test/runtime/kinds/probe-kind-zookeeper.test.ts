/**
 * The job-kind seam on node processes over a real 3-server ZooKeeper ensemble and real TCP: the
 * probe kind (apps/probe-kind.ts) greets, places, budgets, checkpoints and answers a census; a
 * member is killed with SIGKILL and the job still counts every item once, resuming the dead
 * member's tasks from their explicit checkpoints; then a job is cancelled and its nodes are freed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import type { KindRef } from '../../../src/runtime/job/job-spec.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import type { MemberFigures } from '../apps/probe-kind.js';
import { expectedSum, probeRoot, type ProbeResult } from '../apps/probe-task.js';
import { openGate } from '../../support/gate.js';

const KIND: KindRef = { module: new URL('../apps/probe-kind.ts', import.meta.url).href, export: 'default' };
const TASK: TaskRef = { module: new URL('../apps/probe-task.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 180_000 };

describe('a job kind on node processes over ZooKeeper', () => {
  let zk: ZkEnsemble;
  const processes: NodeProcess[] = [];
  const secret = secretFile();

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    processes.push(...await Promise.all(Array.from({ length: 3 }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('every part of the seam works across processes, and SIGKILL of a member loses nothing', T, async () => {
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    const N = 120_000;
    try {
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length === 3, 'three idle nodes');
      const job = await cluster.submit(TASK, probeRoot(N, { hold: true }), { kind: KIND, nodes: 3 });
      let figures: MemberFigures[] = [];
      await waitFor(async () => {
        figures = (await requestJob(cluster.coordination, job.id, 'census', null, { timeoutMs: 15_000 }).catch(() => [])) as MemberFigures[];
        return figures.length === 3 && figures.every((f) => f.hellosIn === 2 && f.hellosAcked === 2 && f.checkpoints >= 1 && f.progress > 0 && f.taskMessages >= 1);
      }, 'every member to greet both others, get a budget, report progress and checkpoint', 90_000);
      assert.equal(figures.reduce((n, f) => n + f.placementsOut, 0), 2, 'the root placed one slice on each other member');
      const leader = await jobLeader(cluster.coordination, job.id);
      const victim = processes.find((p) => p.id !== leader && figures.some((f) => f.node === p.id && f.checkpoints >= 1))!;
      victim.kill('SIGKILL');
      await victim.exited;
      await openGate(cluster.coordination, job.id);
      const result = await withDeadline(job.result<ProbeResult>(), 'the result', 120_000);
      assert.equal(result.sum, expectedSum(N), 'every item counted exactly once');
      assert.ok(result.resumed >= 1, 'the killed member\'s tasks resumed from their explicit checkpoints');
    } finally {
      await cluster.close();
    }
  });

  it('cancel ends a running job and frees its nodes', T, async () => {
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      const job = await cluster.submit(TASK, probeRoot(1_000, { forever: true }), { kind: KIND, nodes: 2 });
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.job === job.id).length === 2, 'two nodes in the job', 60_000);
      assert.equal(await job.cancel(), true);
      assert.equal((await withDeadline(job.outcome(), 'the outcome', 30_000)).status, 'cancelled');
      await waitFor(async () => (await cluster.nodes()).every((n) => n.job === null && n.assignment === ''), 'the nodes to be free', 60_000);
    } finally {
      await cluster.close();
    }
  });
});
