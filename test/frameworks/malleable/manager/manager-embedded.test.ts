/**
 * The resource manager on an embedded cluster (in-process nodes, embedded coordination): split-phase
 * shrinks by draining and by acknowledged `rescale` requests, a launch waiting for the shrink that
 * frees its nodes, a failure warning vacating a node and its clearing expanding the job again, an
 * operator's rescale, and exact counts for every job.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManagedJob, requestRescale } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { clearWarning, ResourceManager, warnNode } from '../../../../src/frameworks/malleable/manager/resource-manager.js';
import { Cluster, type ClusterEvent } from '../../../../src/runtime/client/cluster.js';
import { finishExactly, MECHANICS_ONLY, membersOf, nodesOf, RESCALABLE, rescaleLog, submit, waitFor } from './manager-scenario.js';

const T = { timeout: 150_000 };

describe('resource manager on an embedded cluster', () => {
  it('shrinks by drain and by acknowledged rescale, launches on freed nodes only, vacates a warned node; counts exact', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 4, workers: 1, seed: 14 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'm1', policy: 'equipartition', ...MECHANICS_ONLY });
    try {
      await manager.start();
      // A: a task-pool job (shrinks by draining) takes the whole pool.
      const a = await submit(cluster, 21, { flexibility: 'malleable', min: 1, max: 4 });
      await waitFor(async () => (await membersOf(client, a.id)).length === 4, 'A to run on 4 nodes', 60_000);
      // B: a kind that acknowledges rescale requests; equipartition gives 2 + 2: A drains two nodes first.
      const b = await submit(cluster, 20, { flexibility: 'malleable', min: 1, max: 4, kind: RESCALABLE });
      await waitFor(async () => (await membersOf(client, b.id)).length === 2 && (await membersOf(client, a.id)).length === 2, 'A on 2 and B on 2', 60_000);
      for (const node of await nodesOf(client, b.id)) {
        const left = events.findIndex((e) => e.type === 'job-left' && e.node === node && e.job === a.id);
        const joined = events.findIndex((e) => e.type === 'job-joined' && e.node === node && e.job === b.id);
        assert.ok(left >= 0 && left < joined, `${node} left A before it joined B (split phase)`);
      }
      // C: rigid, one node: A (running first) keeps 2, B shrinks to 1 by a rescale request; C gets B's node after the ack.
      const c = await submit(cluster, 19, { flexibility: 'rigid', nodes: 1 });
      await waitFor(async () => (await membersOf(client, c.id)).length === 1, 'C to run', 60_000);
      const log = await rescaleLog(client, b.id);
      const shrink = log.find((r) => r.type === 'rescale' && r.body.nodes?.length === 1);
      assert.ok(shrink, `B was asked to shrink to one node (log: ${JSON.stringify(log)})`);
      const cNode = (await nodesOf(client, c.id))[0]!;
      assert.ok(shrink.members.includes(cNode), 'C\'s node was still B\'s member when B was asked (released only after the ack)');
      assert.deepEqual(await nodesOf(client, b.id), shrink.body.nodes, 'B holds what it acknowledged');

      // A failure warning on one of A's nodes: A is shrunk off it and nobody gets it; cleared, A expands onto it again.
      const warned = (await nodesOf(client, a.id))[1]!;
      await warnNode(client, warned);
      await waitFor(async () => !(await nodesOf(client, a.id)).includes(warned) && (await membersOf(client, a.id)).length === 1, 'A to vacate the warned node', 60_000);
      assert.equal((await cluster.nodes()).find((n) => n.id === warned)?.assignment, '', 'the warned node is idle');
      await clearWarning(client, warned);
      await waitFor(async () => (await nodesOf(client, a.id)).includes(warned), 'A to expand onto the node again', 60_000);

      // An operator's rescale (tidepool rescale): A to 1 node.
      await requestRescale(client, a.id, 1);
      await waitFor(async () => (await readManagedJob(client, a.id))?.record.events.filter((e) => e.type === 'shrink' && e.nodes === 1).length === 2, 'A to shrink to 1 node (the second time: the first was the vacate)', 30_000);
      assert.equal((await readManagedJob(client, a.id))?.record.rescaleTo, undefined, 'the operator\'s request is consumed');

      await finishExactly(client, [{ id: a.id, n: 21 }, { id: b.id, n: 20 }, { id: c.id, n: 19 }]);
      const record = await readManagedJob(client, b.id);
      assert.ok(record!.record.events.some((e) => e.type === 'shrink' && typeof e.tRescaleMs === 'number'), 'B\'s shrink is recorded with its T_rescale');
      await waitFor(async () => (await readManagedJob(client, b.id))?.record.pending === undefined, 'no shrink left pending once B has ended', 30_000);
    } finally {
      await manager.stop();
      await cluster.close();
    }
  });
});
