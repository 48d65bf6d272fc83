/**
 * An evolving job under the resource manager (embedded cluster, equipartition): the application asks
 * for a node range with `ctx.requestResize(min, max)`; the manager takes the range as the job's bounds
 * and resizes it into them at once (a shrink 4 → 2, then an expand to at least 3 that the policy fills
 * up to 4), and the result stays bit-identical to the plain loops.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { malleableJob } from '../../../../src/frameworks/malleable/malleable-kind-ref.js';
import { malleableProgress } from '../../../../src/frameworks/malleable/submit.js';
import { readManagedJob, submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { ResourceManager } from '../../../../src/frameworks/malleable/manager/resource-manager.js';
import type { MalleableOutcome } from '../../../../src/frameworks/malleable/runtime-options.js';
import { Cluster } from '../../../../src/runtime/client/cluster.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { requestJob } from '../../../../src/runtime/client/job-requests.js';
import { withDeadline } from '../../../support/wait.js';
import type { DecayResult } from '../apps/coupled-decay.js';
import { assertBitIdentical, plainDecay } from '../plain-decay.js';
import { MECHANICS_ONLY, membersOf, waitFor } from './manager-scenario.js';

const DECAY = { module: new URL('../apps/coupled-decay.ts', import.meta.url).href, export: 'default' };

describe('an evolving job under the resource manager', () => {
  it('gets the node range it asks for, as bounds the policy keeps; bit-identical to the plain loops', { timeout: 150_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 4, workers: 1, progressIntervalMs: 0 });
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'm', policy: 'equipartition', ...MECHANICS_ONLY });
    try {
      await manager.start();
      const params = { objects: 8, width: 4, iterations: 60, resizeAt: [{ iteration: 20, min: 1, max: 2 }, { iteration: 40, min: 3, max: 4 }] };
      // The job waits at 18 until it runs on the whole pool, and after each request until the manager has acted on it.
      const job = await submitManagedJob(client, { ...malleableJob(DECAY, params, { pauseAt: [18, 22, 42] }), flexibility: 'malleable', minNodes: 1, maxNodes: 4, secret: cluster.secret! });
      const at = (iteration: number, nodes: number) => waitFor(async () => {
        const p = await malleableProgress(client, job.id).catch(() => undefined);
        return p?.iteration === iteration && p.nodes.length === nodes;
      }, `the job at iteration ${iteration} on ${nodes} node(s)`, 60_000);
      await at(18, 4);
      await requestJob(client, job.id, 'resume');
      await at(22, 2);
      const shrunk = (await readManagedJob(client, job.id))!;
      assert.deepEqual(shrunk.record.bounds, { min: 1, max: 2 }, 'the request became the job\'s bounds');
      assert.equal(shrunk.record.resize, undefined, 'and was consumed');
      await waitFor(async () => (await membersOf(client, job.id)).length === 2, 'the two other nodes to leave the job', 30_000);
      await requestJob(client, job.id, 'resume');
      // Expanded into [3, 4] at once, and equipartition (tGap 0) gives it the last free node too.
      await at(42, 4);
      assert.deepEqual((await readManagedJob(client, job.id))!.record.bounds, { min: 3, max: 4 });
      await requestJob(client, job.id, 'resume');
      const outcome = await withDeadline(awaitOutcome(client, job.id), 'the job to finish', 60_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      const { result, stats } = (outcome as { value: MalleableOutcome<DecayResult> }).value;
      assertBitIdentical(result, plainDecay(params), 'evolving under the manager');
      assert.deepEqual(stats.resizeRequests, [{ iteration: 20, min: 1, max: 2 }, { iteration: 40, min: 3, max: 4 }]);
      const events = (await readManagedJob(client, job.id))!.record.events;
      assert.ok(events.some((e) => e.type === 'shrink' && e.nodes === 2), `the manager recorded the shrink to 2: ${JSON.stringify(events)}`);
      assert.ok(events.some((e) => e.type === 'expand' && e.nodes >= 3), `and an expand to 3 or more: ${JSON.stringify(events)}`);
    } finally {
      await withDeadline(manager.stop(), 'the manager to stop', 20_000).catch(() => undefined);
      await withDeadline(cluster.close(), 'the cluster to close', 20_000).catch(() => undefined);
    }
  });
});
