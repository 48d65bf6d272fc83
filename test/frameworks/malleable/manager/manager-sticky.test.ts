/**
 * An operator's size sticks (issue 29: "an operator's rescale was undone by the policy within a
 * second"): on an embedded cluster with equipartition and T_gap 0, `scale A 1` shrinks A to one
 * node; a rigid job arriving next makes the policy plan again and gets a node, while A — which
 * equipartition would otherwise grow to the other three at once — stays on one. Released, A grows
 * onto the idle nodes; both jobs count exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManagedJob, releasePin, requestRescale } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { ResourceManager } from '../../../../src/frameworks/malleable/manager/resource-manager.js';
import type { ExecutorEvent } from '../../../../src/frameworks/malleable/manager/split-phase-executor.js';
import { Cluster } from '../../../../src/runtime/client/cluster.js';
import { finishExactly, membersOf, nodesOf, submit, waitFor } from './manager-scenario.js';

describe('an operator\'s size under the resource manager', () => {
  it('holds through the policy\'s later passes until released', { timeout: 150_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 4, workers: 1, seed: 29 });
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'm', policy: 'equipartition', tGapMs: 0 });
    const events: ExecutorEvent[] = [];
    manager.on('event', (e) => events.push(e));
    try {
      await manager.start();
      const a = await submit(cluster, 20, { flexibility: 'malleable', min: 1, max: 4 });
      await waitFor(async () => (await membersOf(client, a.id)).length === 4, 'A to run on 4 nodes', 60_000);

      await requestRescale(client, a.id, 1);
      await waitFor(async () => {
        const r = (await readManagedJob(client, a.id))!;
        return r.record.rescaleTo === undefined && r.record.pending === undefined && r.record.events.some((e) => e.type === 'shrink' && e.nodes === 1);
      }, 'A to be shrunk to 1 node by the operator\'s request', 60_000);
      const pinned = (await readManagedJob(client, a.id))!;
      assert.equal(pinned.record.pin, 1, 'the operator\'s size is kept in A\'s record');
      assert.deepEqual([pinned.minNodes, pinned.maxNodes, pinned.range], [1, 1, { min: 1, max: 4 }]);
      const afterPin = events.length;

      // B's arrival is a scheduling event: the policy plans both jobs. Unpinned, A (T_gap 0, max 4) would be grown to 3
      // in the same pass as B's launch (decisions are carried out in job order: A's before B's).
      const b = await submit(cluster, 18, { flexibility: 'rigid', nodes: 1 });
      await waitFor(async () => events.some((e) => e.type === 'launch' && e.job === b.id), 'B to be launched', 60_000);
      assert.deepEqual(events.slice(afterPin).filter((e) => e.job === a.id && e.type === 'expand'), [], 'A was not grown while pinned');
      assert.equal((await nodesOf(client, a.id)).length, 1, 'A still holds 1 node');

      assert.equal(await releasePin(client, a.id), 1);
      await waitFor(async () => (await nodesOf(client, a.id)).length === 3, 'A to grow onto the 2 idle nodes once released (B holds the fourth)', 60_000);
      assert.equal((await readManagedJob(client, a.id))!.record.pin, undefined);
      await finishExactly(client, [{ id: a.id, n: 20 }, { id: b.id, n: 18 }]);
    } finally {
      await manager.stop();
      await cluster.close();
    }
  });
});
