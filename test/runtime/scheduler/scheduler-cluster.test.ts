/**
 * The scheduler with real nodes (embedded cluster): a job submitted while every node is busy waits
 * and starts when nodes free up; a job whose minimum cannot be met waits whole; a crashed node is
 * replaced by an idle one; the counts stay exact.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster, type ClusterEvent } from '../../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { rootState } from '../apps/compositions.js';
import { openGate } from '../../support/gate.js';

const HELD: TaskRef = { module: new URL('../apps/held-compositions.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };


const nodesOf = async (cluster: Cluster, job: string) => (await cluster.nodes()).filter((n) => n.assignment === job).map((n) => n.id);

describe('scheduler on an embedded cluster', () => {
  it('queues jobs while the cluster is busy (FCFS, minimum met whole) and starts them as nodes free up', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 51 });
    try {
      const a = await cluster.submit(HELD, rootState(16), { nodes: 2 });
      await waitFor(async () => (await nodesOf(cluster, a.id)).length === 2, 'A on both nodes');
      const b = await cluster.submit(HELD, rootState(15), { nodes: 2, minNodes: 2 });
      const c = await cluster.submit(HELD, rootState(14), { nodes: 1 });
      // Nothing is free: B and C wait (C behind B: first come, first served).
      assert.deepEqual(await nodesOf(cluster, b.id), []);
      assert.deepEqual(await nodesOf(cluster, c.id), []);
      await openGate(cluster.coordination, a.id);
      assert.equal(await withDeadline(a.result<number>(), 'A', 60_000), 2 ** 16);
      // Both nodes free at once: B (minimum 2) starts on both; C still waits behind it.
      await waitFor(async () => (await nodesOf(cluster, b.id)).length === 2, 'B to start on two nodes');
      assert.deepEqual(await nodesOf(cluster, c.id), []);
      await openGate(cluster.coordination, b.id);
      await openGate(cluster.coordination, c.id);
      assert.equal(await withDeadline(b.result<number>(), 'B', 60_000), 2 ** 15);
      assert.equal(await withDeadline(c.result<number>(), 'C', 60_000), 2 ** 14);
    } finally {
      await cluster.close();
    }
  });

  it('replaces a crashed node with an idle one', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 52 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    try {
      const job = await cluster.submit(HELD, rootState(17), { nodes: 2 });
      await waitFor(async () => (await nodesOf(cluster, job.id)).length === 2, 'the job on two nodes');
      const [spare] = (await cluster.nodes()).filter((n) => n.assignment === '').map((n) => n.id);
      const victim = (await nodesOf(cluster, job.id))[0]!;
      await cluster.crashNode(victim);
      await waitFor(() => events.some((e) => e.type === 'job-joined' && e.node === spare && e.job === job.id), 'the spare node to replace the crashed one');
      await openGate(cluster.coordination, job.id);
      assert.equal(await withDeadline(job.result<number>(), 'the result', 60_000), 2 ** 17);
    } finally {
      await cluster.close();
    }
  });
});
