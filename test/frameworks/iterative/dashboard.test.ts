/** The dashboard's job-kind panel sees an iterative job's figures: iterations done and every thread's speed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../../../src/index.js';
import { ClusterMonitor } from '../../../src/dashboard/index.js';
import { submitIterative } from '../../../src/frameworks/iterative/run-iterative.js';
import { waitFor, withDeadline } from '../../support/wait.js';

const APP = { module: new URL('./apps/checksum.ts', import.meta.url).href, export: 'default' };

test('nodes publish iterationsDone and speed.<thread> with their counters', async () => {
  // Nodes publish their stats (with the kind's figures) every 200 ms.
  const cluster = await Cluster.embedded({ nodes: 1, workers: 2, progressIntervalMs: 200 });
  const monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 50 });
  await monitor.start();
  try {
    // 64 blocks of 2 × 25 ms of sleep: about 1.6 s on two threads, time for a few stats rounds.
    const job = await submitIterative(cluster, APP, {
      iterations: 6400, params: { work: 2, sleepMs: 25 }, blockSize: 100, chunkSize: 50, balance: 'ruper', nodes: 1,
      ruper: { checkpointInterval: 0.1, minRemaining: 0.02 },
    });
    await waitFor(() => monitor.snapshot?.nodes.some((n) => n.kind === 'iterative' && (n.figures.iterationsDone ?? 0) > 0 && (n.figures['speed.0'] ?? 0) > 0 && (n.figures['speed.1'] ?? 0) > 0) ?? false, 'the iterative figures with both threads\' speeds', 30_000);
    const r = await withDeadline(job.result<{ n: number }>(), 'the result', 60_000);
    assert.equal(r.n, 6400);
  } finally {
    await monitor.stop();
    await cluster.close();
  }
});
