/**
 * Node processes over a real ZooKeeper ensemble and real TCP: exact counts with three processes,
 * with a node joining and one draining (SIGTERM) mid-run, with a node killed by SIGKILL, and with
 * the job's coordinator killed by SIGKILL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { jobCommitters, taskOwners } from '../support/ledger-probes.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { rootState } from './apps/compositions.js';

const COMPOSITIONS: TaskRef = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
const N = 22;
const WORK = 300;
const T = { timeout: 180_000 };

describe('node processes on ZooKeeper', () => {
  let zk: ZkEnsemble;
  let secret: string;
  const processes: NodeProcess[] = [];
  const start = async (count: number, seenBy?: Cluster) => {
    const started = await Promise.all(Array.from({ length: count }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret })));
    processes.push(...started);
    // Another session may read from a server a moment behind: wait until it sees the new nodes.
    if (seenBy) await waitFor(async () => { const ids = new Set((await seenBy.nodes()).map((n) => n.id)); return started.every((p) => ids.has(p.id)); }, 'the new nodes to be visible');
    return started;
  };

  before(async () => {
    zk = await startEnsemble({ size: 3 });
    secret = secretFile();
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('three node processes count exactly; a fourth joins and one drains on SIGTERM mid-run', T, async () => {
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    const nodes = await start(4, cluster);
    try {
      const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK), { nodes: 3 });
      await waitFor(async () => (await taskOwners(cluster.coordination, job.id)).size >= 2, 'work to spread over two nodes', 60_000);
      // The idle fourth process is assigned to the running job and must start stealing at once.
      const { added } = await cluster.scale(job.id, 4);
      assert.equal(added.length, 1);
      const late = nodes.find((n) => n.id === added[0])!;
      await waitFor(async () => (await jobCommitters(cluster.coordination, job.id)).has(late.id), 'the new node to take part', 60_000);
      const leader = await jobLeader(cluster.coordination, job.id);
      const leaving = nodes.find((n) => n.id !== leader && n.id !== late.id)!;
      leaving.kill('SIGTERM');
      assert.equal(await withDeadline(leaving.exited, 'drained node to exit', 60_000), 0);
      const outcome = await withDeadline(job.outcome(), 'job outcome', 120_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.equal(await job.result<number>(), 2 ** N);
    } finally {
      await cluster.close();
    }
  });

  for (const target of ['a worker node', 'the coordinator'] as const) {
    it(`SIGKILL of ${target} mid-run: exact count, one result`, T, async () => {
      const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
      try {
        const idle = (await cluster.nodes()).filter((n) => n.assignment === '').length;
        if (idle < 3) await start(3 - idle, cluster);
        await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === '').length >= 3, 'three idle nodes');
        const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK), { nodes: 3 });
        await waitFor(async () => (await taskOwners(cluster.coordination, job.id)).size >= 3, 'work on all three nodes', 60_000);
        const leader = await jobLeader(cluster.coordination, job.id);
        const owners = await taskOwners(cluster.coordination, job.id);
        const victimId = target === 'the coordinator' ? leader : [...owners.keys()].find((id) => id !== leader);
        const victim = processes.find((p) => p.id === victimId);
        assert.ok(victim, `found the process of ${victimId}`);
        victim.kill('SIGKILL');
        await victim.exited;
        const outcome = await withDeadline(job.outcome(), 'job outcome', 120_000);
        assert.equal(outcome.status, 'done', JSON.stringify(outcome));
        assert.equal(await job.result<number>(), 2 ** N);
        if (target === 'the coordinator') assert.notEqual(await jobLeader(cluster.coordination, job.id), leader);
      } finally {
        await cluster.close();
      }
    });
  }
});
