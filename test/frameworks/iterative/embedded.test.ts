/**
 * The iterative kind on embedded clusters: every strategy counts every iteration exactly once and
 * gives the sequential result bit for bit, on 1–4 nodes, and through scale-out, drain and a crash
 * mid-run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../../../src/index.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { iterateSequentially, runIterative, submitIterative, type IterativeOptions } from '../../../src/frameworks/iterative/run-iterative.js';
import type { BalanceStrategy } from '../../../src/frameworks/iterative/iterative-types.js';
import checksum, { type Checksum } from './apps/checksum.js';
import { waitFor, withDeadline } from '../../support/wait.js';

const APP = { module: new URL('./apps/checksum.ts', import.meta.url).href, export: 'default' };
const STRATEGIES: BalanceStrategy[] = ['static', 'steal', 'ruper'];
const FAST_RUPER = { checkpointInterval: 0.1, minRemaining: 0.02 };

function exact(value: Checksum, reference: Checksum, n: number, what: string) {
  assert.equal(value.count, n, `${what}: every iteration counted once`);
  assert.equal(value.indexSum, (n * (n - 1)) / 2, `${what}: index checksum`);
  assert.deepEqual(value, reference, `${what}: bit-identical to the sequential fold`);
}

test('static, steal and ruper give the sequential result bit for bit on 1, 2 and 4 nodes', async () => {
  const opts: IterativeOptions<{ work: number }> = { iterations: 24_000, params: { work: 6 }, blockSize: 200, chunkSize: 50, ruper: FAST_RUPER };
  const reference = iterateSequentially(checksum, opts).value;
  for (const nodes of [1, 2, 4]) {
    const cluster = await Cluster.embedded({ nodes, workers: nodes <= 2 ? 2 : 1, progressIntervalMs: 0 });
    try {
      for (const balance of STRATEGIES) {
        const r = await withDeadline(runIterative<Checksum, { work: number }>(cluster, APP, { ...opts, balance, nodes }), `${balance} on ${nodes} nodes`, 60_000);
        assert.equal(r.iterations, opts.iterations);
        exact(r.value, reference, opts.iterations!, `${balance} on ${nodes} node(s)`);
      }
    } finally {
      await cluster.close();
    }
  }
});

/** A job of 96 blocks that sleeps 2 × 25 ms per block: long enough to change the cluster under it, whatever the load. */
const SLOW: IterativeOptions<{ work: number; sleepMs: number }> = { iterations: 9_600, params: { work: 4, sleepMs: 25 }, blockSize: 100, chunkSize: 50, ruper: FAST_RUPER, checkpointMs: 100 };

test('a node that joins mid-run takes a share (steal, ruper), and the result stays exact', async () => {
  const reference = iterateSequentially(checksum, SLOW).value;
  for (const balance of ['steal', 'ruper'] as const) {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 2, progressIntervalMs: 0 });
    const doneOn = new Set<string>();
    cluster.on((e) => void (e.type === 'task-done' && doneOn.add(e.node)));
    try {
      // About 2.4 s on the first node's two threads: ample time for a node to join.
      const job = await submitIterative(cluster, APP, { ...SLOW, balance, nodes: 1 });
      await waitFor(async () => (await cluster.nodes()).some((n) => n.assignment === job.id), 'the first node to start', 20_000);
      const [late] = await cluster.addNodes(1);
      await cluster.scale(job.id, 2);
      const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), `${balance} job`, 60_000);
      exact(r.v, reference, SLOW.iterations!, `${balance} with a node added`);
      assert.ok(doneOn.has(late!), `${balance}: the node that joined completed work`);
    } finally {
      await cluster.close();
    }
  }
});

test('drain and crash of a node mid-run: every block counted once, result bit-identical', async () => {
  const reference = iterateSequentially(checksum, SLOW).value;
  // kill -9 under RUPER is tested on node processes (iterative-zookeeper.test.ts).
  for (const [balance, how] of [['ruper', 'drain'], ['static', 'crash']] as const) {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, progressIntervalMs: 0 });
    const doneOn = new Set<string>();
    cluster.on((e) => void (e.type === 'task-done' && doneOn.add(e.node)));
    try {
      const job = await submitIterative(cluster, APP, { ...SLOW, balance, nodes: 3 });
      await waitFor(async () => (await cluster.nodes()).filter((n) => n.assignment === job.id).length === 3, 'three nodes in the job', 20_000);
      const leader = await (async () => {
        let l: string | null = null;
        await waitFor(async () => (l = await jobLeader(cluster.coordination, job.id)) !== null, 'a leader');
        return l!;
      })();
      const victim = cluster.localNodes().map((n) => n.id).find((id) => id !== leader)!;
      if (how === 'drain') await cluster.drain(victim);
      else await cluster.crashNode(victim);
      const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), `${balance} job after ${how}`, 60_000);
      exact(r.v, reference, SLOW.iterations!, `${balance}, ${how} of a node`);
    } finally {
      await cluster.close();
    }
  }
});
