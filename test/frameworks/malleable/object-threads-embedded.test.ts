/**
 * Objects on the nodes' worker threads, on embedded clusters: Stencil2D, Wave2D, LeanMD and Lulesh
 * bit-identical to their sequential runs on 1 node × 1 worker thread, 1 × 2 and 2 × 2 (balancing by
 * measured load as they run), and across a shrink, an expand and a replace of nodes with two threads
 * each; the thread probe's every step runs on a worker thread (never the main one), on both threads of
 * its node, and balancing moves its heavy objects between the threads without changing a bit of its
 * reductions; when a worker thread dies, the job rolls back to its last checkpoint and the result is
 * still bit-identical.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { describe, it } from 'node:test';
import { MALLEABLE_APPS } from '../../../src/frameworks/malleable/applications.js';
import { loadMalleableApp } from '../../../src/frameworks/malleable/malleable-app.js';
import type { MalleableOutcome } from '../../../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../../../src/frameworks/malleable/sequential.js';
import { malleableProgress, rescaleMalleable, submitMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import type { ProbeResult } from './apps/thread-probe.js';
import { assertBitIdentical, plainDecay } from './plain-decay.js';

const T = { timeout: 180_000 };
const PROBE = { module: new URL('./apps/thread-probe.ts', import.meta.url).href, export: 'default' };
/** Small instances of the four applications (LeanMD: one step is 3 iterations; Lulesh: 2). */
const APPS: Array<{ app: string; params: unknown }> = [
  { app: 'stencil', params: { grid: 48, blocks: 4, iterations: 24 } },
  { app: 'wave', params: { grid: 40, blocks: 4, iterations: 24 } },
  { app: 'leanmd', params: { cells: [3, 3, 3], atomsPerSide: 2, steps: 8, dt: 0.01 } },
  { app: 'lulesh', params: { elements: 240, blocks: 6, steps: 12 } },
];

/** The whole result, every bit (JSON keeps a double's every bit), of the sequential run. */
async function sequential(app: string, params: unknown): Promise<string> {
  return JSON.stringify(runSequential(await loadMalleableApp(MALLEABLE_APPS[app]!), params));
}

async function onCluster(opts: { nodes: number; workers: number }, body: (cluster: Cluster) => Promise<void>): Promise<void> {
  const cluster = await Cluster.embedded({ ...opts, progressIntervalMs: 0 });
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}

describe('objects on worker threads (embedded clusters)', () => {
  for (const [nodes, workers] of [[1, 1], [1, 2], [2, 2]] as const) {
    it(`${nodes} node(s) × ${workers} worker thread(s): the four applications bit-identical to their sequential runs`, T, async () => {
      await onCluster({ nodes, workers }, async (cluster) => {
        for (const { app, params } of APPS) {
          const job = await submitMalleable(cluster, MALLEABLE_APPS[app]!, params, { nodes, runtime: { lbEvery: 6 } });
          const { result, stats } = await withDeadline(job.result(), `${app}'s result`, 90_000);
          assert.equal(JSON.stringify(result), await sequential(app, params), `${app} on ${nodes} × ${workers}: bit-identical`);
          assert.ok(stats.balancings >= 1, `${app}: balanced by measured load while it ran`);
          assert.ok(stats.threadsPerIteration.every((t) => t === nodes * workers), `${app}: every iteration on ${nodes * workers} object threads`);
        }
      });
    });
  }

  it('shrink 2 → 1, expand 1 → 2 and replace a node, on nodes of two threads: the four applications bit-identical', T, async () => {
    await onCluster({ nodes: 3, workers: 2 }, async (cluster) => {
      const pausedAt = (job: string, iteration: number) =>
        waitFor(async () => (await malleableProgress(cluster.coordination, job).catch(() => undefined))?.iteration === iteration, `job at iteration ${iteration}`, 60_000);
      for (const { app, params } of APPS) {
        const job = await submitMalleable(cluster, MALLEABLE_APPS[app]!, params, { nodes: 2, maxNodes: 3, runtime: { pauseAt: [6, 12, 18] } });
        await pausedAt(job.id, 6);
        const leader = (await jobLeader(cluster.coordination, job.id))!;
        assert.equal((await rescaleMalleable(cluster.coordination, job.id, 1)).kind, 'shrink');
        await requestJob(cluster.coordination, job.id, 'resume');
        await pausedAt(job.id, 12);
        const expand = await rescaleMalleable(cluster.coordination, job.id, 2);
        assert.equal(expand.kind, 'expand');
        await requestJob(cluster.coordination, job.id, 'resume');
        await pausedAt(job.id, 18);
        const other = expand.nodes.find((n) => n !== leader)!;
        const spare = cluster.localNodes().map((n) => n.id).find((id) => !expand.nodes.includes(id))!;
        await waitFor(async () => (await cluster.nodes()).find((n) => n.id === spare)?.job === null, `${spare} to be free`, 30_000);
        const replace = await rescaleMalleable(cluster.coordination, job.id, [leader, spare]);
        assert.deepEqual([replace.kind, replace.nodes.includes(other)], ['replace', false], `${app}: ${other} replaced by ${spare}`);
        await requestJob(cluster.coordination, job.id, 'resume');
        const { result, stats } = await withDeadline(job.result(), `${app}'s result`, 90_000);
        assert.equal(JSON.stringify(result), await sequential(app, params), `${app}: bit-identical across the rescales`);
        assert.deepEqual(stats.rescales.map((r) => r.kind), ['shrink', 'expand', 'replace']);
        assert.deepEqual([5, 6, 12, 18].map((i) => stats.threadsPerIteration[i]), [4, 2, 4, 4], `${app}: two threads on each node it held`);
        await waitFor(async () => (await cluster.nodes()).every((n) => n.job === null), 'every node free', 30_000);
      }
    });
  });

  it('every step runs on a worker thread, on both of the node\'s; balancing moves heavy objects between them; reductions bit-identical', T, async () => {
    await onCluster({ nodes: 1, workers: 2 }, async (cluster) => {
      const params = { objects: 8, width: 4, iterations: 24, heavy: 2, spinMs: 2 };
      const job = await submitMalleable<ProbeResult>(cluster, PROBE, params, { nodes: 1, runtime: { lbEvery: 3, syncEvery: 1 } });
      const { result, stats } = (await withDeadline(job.result(), 'the result', 60_000)) as MalleableOutcome<ProbeResult>;
      assertBitIdentical(result.decay, plainDecay(params), 'the reductions and values, bit for bit');
      const threads = new Set(result.ran.flat());
      assert.equal(result.ran.flat().length, 8 * 24, 'every step recorded once');
      assert.ok(!threads.has(threadId), `no step ran on the main thread (${threadId}): ${[...threads].join(', ')}`);
      assert.equal(threads.size, 2, `steps ran on both worker threads: ${[...threads].join(', ')}`);
      // Objects 0 and 1 start together on the first thread and are ~100 times heavier than the others: RefineLB separates them.
      const moved = result.ran.filter((r) => new Set(r).size > 1).length;
      assert.ok(moved >= 1 && stats.balancings >= 1, `objects moved between the threads (${moved})`);
      assert.notEqual(result.ran[0]!.at(-1), result.ran[1]!.at(-1), 'the two heavy objects end on different threads');
    });
  });

  it('a worker thread that dies (its objects with it): rollback to the last checkpoint on a replacement thread; bit-identical', T, async () => {
    await onCluster({ nodes: 1, workers: 2 }, async (cluster) => {
      const marker = join(mkdtempSync(join(tmpdir(), 'tidepool-probe-')), 'exited');
      const params = { objects: 8, width: 4, iterations: 24, exitAt: { iteration: 14, index: 5, marker } };
      const job = await submitMalleable<ProbeResult>(cluster, PROBE, params, { nodes: 1, runtime: { checkpointEvery: 5 } });
      const { result, stats } = (await withDeadline(job.result(), 'the result', 60_000)) as MalleableOutcome<ProbeResult>;
      assert.ok(existsSync(marker), 'object 5 ended its thread at iteration 14');
      assertBitIdentical(result.decay, plainDecay(params), 'bit-identical after the rollback');
      assert.equal(stats.rollbacks, 1, 'one rollback, to the checkpoint at iteration 10');
      const threads = new Set(result.ran.slice(4).flatMap((r) => r.slice(10)));
      assert.ok(!threads.has(threadId), 'every step on a worker thread');
      assert.ok(!result.ran[5]!.slice(10).includes(result.ran[5]![9]!), 'object 5 ran on the replacement thread after the rollback');
    });
  });
});
