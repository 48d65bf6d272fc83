/**
 * runElastic applies a scale schedule in its order: a scale-in due while the scale-out before it is
 * still starting its node waits for it. Starting an embedded node takes far longer than the 1 ms between
 * the two steps here, so without the ordering the scale-in ran first (nothing to release) and the node
 * added afterwards stayed (seen as `tidepool demo --quick` reporting no node left, on a loaded machine).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { runElastic } from '../../src/runtime/client/elastic-run.js';
import { deferred, withDeadline } from '../support/wait.js';
import { rootState } from './apps/compositions.js';

const APP = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };

describe('runElastic', () => {
  it('a scale-in 1 ms after a scale-out drains the node that scale-out started', { timeout: 120_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1, progressIntervalMs: 0 });
    const drained = deferred<string>();
    let jobId = '';
    try {
      const run = runElastic(
        { cluster, nodes: 1, workers: 1, schedule: [{ atMs: 0, delta: 1 }, { atMs: 1, delta: -1 }], onEvent: (e) => {
          if (e.type === 'job-left' && e.reason === 'drained') drained.resolve(e.node);
        } },
        async (c) => {
          const job = await c.submit(APP, rootState(40, 100), { nodes: 1 }); // far longer than the test: cancelled below
          jobId = job.id;
          return job;
        },
      );
      await withDeadline(drained.promise, 'the node added by the scale-out to be drained by the scale-in', 60_000);
      await cluster.cancel(jobId);
      const { outcome, stats } = await withDeadline(run, 'the run to end', 60_000);
      assert.equal(outcome.status, 'cancelled');
      assert.deepEqual([stats.nodesJoined, stats.nodesLeft], [1, 1]);
    } finally {
      await cluster.close();
    }
  });
});
