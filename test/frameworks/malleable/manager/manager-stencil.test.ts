/**
 * The resource manager with the malleable job kind itself (Stencil2D over migratable blocks, from
 * src/frameworks/malleable) on an embedded cluster: the stencil takes the whole pool, a rigid job's
 * arrival makes equipartition shrink it by a `rescale` request it carries out at a sync point, the
 * rigid job starts only on the nodes the stencil gave up, and when the rigid job ends the stencil
 * expands again — its result bit-identical to a sequential run of the same grid.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GridResult } from '../../../../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableJob } from '../../../../src/frameworks/malleable/malleable-kind-ref.js';
import { malleableProgress } from '../../../../src/frameworks/malleable/submit.js';
import { readManagedJob, submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { ResourceManager } from '../../../../src/frameworks/malleable/manager/resource-manager.js';
import type { MalleableOutcome } from '../../../../src/frameworks/malleable/runtime-options.js';
import { Cluster, type ClusterEvent } from '../../../../src/runtime/client/cluster.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { requestJob } from '../../../../src/runtime/client/job-requests.js';
import { plainStencil } from '../plain-grids.js';
import { finishExactly, MECHANICS_ONLY, membersOf, submit, waitFor } from './manager-scenario.js';
import { withDeadline } from '../../../support/wait.js';

const STENCIL = { module: new URL('../../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };

describe('resource manager with the malleable job kind', () => {
  it('shrinks a running stencil for a rigid job and expands it afterwards; bit-identical to sequential', { timeout: 150_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 4, workers: 1, progressIntervalMs: 0 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'm', policy: 'equipartition', ...MECHANICS_ONLY });
    try {
      await manager.start();
      const params = { grid: 48, blocks: 4, iterations: 400 };
      // The stencil waits at iteration 200 (serving requests) until the test resumes it: it surely outlives the rigid job.
      const stencil = await submitManagedJob(client, { ...malleableJob(STENCIL, params, { pauseAt: [200] }), flexibility: 'malleable', minNodes: 1, maxNodes: 4, secret: cluster.secret! });
      await waitFor(async () => (await membersOf(client, stencil.id)).length === 4, 'the stencil on 4 nodes', 60_000);
      const rigid = await submit(cluster, 18, { flexibility: 'rigid', nodes: 2 });
      await waitFor(async () => (await membersOf(client, rigid.id)).length === 2, 'the rigid job on 2 nodes', 60_000);
      for (const e of events.filter((x) => x.type === 'job-joined' && x.job === rigid.id)) {
        const node = (e as { node: string }).node;
        const left = events.findIndex((x) => x.type === 'job-left' && x.node === node && x.job === stencil.id);
        assert.ok(left >= 0 && left < events.indexOf(e), `${node} left the stencil before it joined the rigid job`);
      }
      await finishExactly(client, [{ id: rigid.id, n: 18 }]);
      await waitFor(async () => (await readManagedJob(client, stencil.id))!.record.events.some((e) => e.type === 'expand' && e.nodes === 4 && e.tRescaleMs !== undefined), 'the stencil to expand back to 4 nodes', 60_000);
      await waitFor(async () => (await malleableProgress(client, stencil.id).catch(() => undefined))?.iteration === 200, 'the stencil to pause at iteration 200', 60_000);
      await requestJob(client, stencil.id, 'resume');
      const outcome = await withDeadline(awaitOutcome(client, stencil.id), 'the stencil to finish', 60_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      const { result, stats } = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(result.checksum, plainStencil(48, 400, 4).checksum, 'bit-identical to the sequential run');
      // Nodes join at the next sync point after they arrive: one at a time when they arrive apart, so growth to the
      // pool (before the rigid job) and back to it (after) may take more than one expand. What must hold: exactly one
      // shrink, to 2, for the rigid job; only growth before it; after it only growth, ending on 4 nodes.
      const rescales = stats.rescales.filter((r) => r.kind !== 'none').map((r) => [r.kind, r.nodes.length] as const);
      const shrinks = rescales.flatMap(([kind, n], i) => (kind === 'shrink' ? [[i, n]] : []));
      assert.deepEqual(shrinks.map(([, n]) => n), [2], `one shrink, to 2 nodes: ${JSON.stringify(rescales)}`);
      const growing = (xs: ReadonlyArray<readonly [string, number]>) => xs.every(([kind, n], i) => kind === 'expand' && (i === 0 || n > xs[i - 1]![1]));
      const at = shrinks[0]![0]!;
      assert.ok(growing(rescales.slice(0, at)), `only growth before the shrink: ${JSON.stringify(rescales)}`);
      const after = rescales.slice(at + 1);
      assert.ok(after.length > 0 && growing(after) && after.at(-1)![1] === 4, `expanded back to 4 after the rigid job: ${JSON.stringify(rescales)}`);
      // Nothing failed: no rollback, also when the shrink let the leader's own node go (the next leader takes over
      // from the shrink's checkpoint) or a node given to the stencil was taken back before the stencil took it.
      assert.equal(stats.rollbacks, 0, `no rollback: ${JSON.stringify(rescales)}`);
      const record = (await readManagedJob(client, stencil.id))!.record;
      assert.ok(record.events.some((e) => e.type === 'shrink' && e.nodes === 2 && typeof e.tRescaleMs === 'number'), 'the manager recorded the shrink with the job\'s T_rescale');
    } finally {
      // Bounded: a job stuck by a failure must not keep this file (and CI) running; its nodes are then crashed.
      await withDeadline(manager.stop(), 'the manager to stop', 20_000).catch(() => undefined);
      await withDeadline(cluster.close(), 'the cluster to close', 20_000).catch(async () => {
        await Promise.all((await cluster.nodes()).map((n) => cluster.crashNode(n.id).catch(() => undefined)));
      });
    }
  });
});
