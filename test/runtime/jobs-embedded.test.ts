/**
 * Jobs on an embedded cluster beyond counting: global variables through the runtime, several
 * jobs sharing a cluster, a node moved from one job to another mid-run, and failing jobs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode } from '../../src/util/codec.js';
import { Cluster, type ClusterEvent } from '../../src/runtime/client/cluster.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { rootState } from './apps/compositions.js';
import { minSequentially } from './apps/find-min.js';
import { openGate } from '../support/gate.js';

const ref = (file: string): TaskRef => ({ module: new URL(`./apps/${file}`, import.meta.url).href, export: 'default' });
const T = { timeout: 120_000 };

describe('jobs on an embedded cluster', () => {
  it('global variables propagate between tasks on different nodes (min rule)', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 3 });
    try {
      const job = await cluster.submit(ref('find-min.ts'), { lo: 0, hi: 3_000_000, best: Infinity });
      const expected = minSequentially(0, 3_000_000);
      assert.equal(await withDeadline(job.result<number>(), 'result', 100_000), expected);
      const stored = await cluster.coordination.getData(`${jobPaths(job.id).vars}/best`);
      assert.equal(JSON.parse(stored.data.toString('utf8')), expected, 'the global variable holds the minimum');
    } finally {
      await cluster.close();
    }
  });

  it('two jobs share a cluster, and a node moves from one to the other mid-run: both exact', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 4, workers: 1, seed: 4 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    try {
      // Both hold their last tasks until the test sets `go`: they surely still run while the node moves.
      const a = await cluster.submit(ref('held-compositions.ts'), rootState(21, 300), { nodes: 2 });
      const b = await cluster.submit(ref('held-compositions.ts'), rootState(20, 300), { nodes: 2 });
      const nodesOf = async (job: string) => (await cluster.nodes()).filter((n) => n.assignment === job).map((n) => n.id);
      assert.equal((await nodesOf(a.id)).length, 2);
      assert.equal((await nodesOf(b.id)).length, 2);
      await waitFor(() => events.some((e) => e.type === 'steal' && e.job === a.id), 'job A to spread');
      // Move one node from A to B: it drains out of A, then joins B.
      const { released } = await cluster.scale(a.id, 1);
      await waitFor(() => events.some((e) => e.type === 'job-left' && e.node === released[0] && e.job === a.id), 'the node to leave job A');
      const { added } = await cluster.scale(b.id, 3);
      assert.deepEqual(added, released, 'the released node is the one that joins B');
      await waitFor(() => events.some((e) => e.type === 'job-joined' && e.node === released[0] && e.job === b.id), 'the node to join job B');
      for (const job of [a, b]) await openGate(cluster.coordination, job.id);
      const [ra, rb] = await withDeadline(Promise.all([a.result<number>(), b.result<number>()]), 'both results', 100_000);
      assert.equal(ra, 2 ** 21);
      assert.equal(rb, 2 ** 20);
    } finally {
      await cluster.close();
    }
  });

  it('tasks that spawn tasks: a binary tree of 2047 tasks, each counted once across 3 nodes', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 6 });
    try {
      const job = await cluster.submit(ref('spawn-tree.ts'), { level: 0, depth: 10 });
      const outcome = await withDeadline(job.outcome(), 'outcome', 100_000);
      assert.equal(outcome.status, 'done');
      assert.equal((outcome as { value: number }).value, 2 ** 11 - 1);
      assert.equal((outcome as { completions: number }).completions, 2 ** 11 - 1, 'one committed completion per task');
    } finally {
      await cluster.close();
    }
  });

  it('a job input is shared by every task on every node (shipped once per worker)', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 7 });
    try {
      const values = Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 1000);
      const job = await cluster.submit(ref('sum-input.ts'), { lo: 0, hi: values.length, sum: 0 }, { input: { values } });
      assert.equal(await withDeadline(job.result<number>(), 'result', 100_000), values.reduce((a, b) => a + b, 0));
    } finally {
      await cluster.close();
    }
  });

  it('a task that throws fails its job with the error, and the nodes are released', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 2, seed: 5 });
    try {
      const job = await cluster.submit(ref('failing.ts'), { depth: 0 });
      const outcome = await withDeadline(job.outcome(), 'outcome', 60_000);
      assert.equal(outcome.status, 'failed');
      assert.match((outcome as { error: string }).error, /gives up/);
      await assert.rejects(job.result(), /failed: .*gives up/);
      await waitFor(async () => (await cluster.nodes()).every((n) => n.assignment === '' && n.job === null), 'nodes to be released');
      const stored = decode<{ status: string }>((await cluster.coordination.getData(jobPaths(job.id).result)).data);
      assert.equal(stored.status, 'failed');
    } finally {
      await cluster.close();
    }
  });

  it('a task module that cannot be loaded is a clear error at submission', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1 });
    try {
      await assert.rejects(cluster.submit({ module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'nope' }, {}), /has no task type export "nope"/);
      await assert.rejects(cluster.submit({ module: 'file:///nonexistent/task.js', export: 'default' }, {}), /Cannot find module|ERR_MODULE_NOT_FOUND|nonexistent/);
    } finally {
      await cluster.close();
    }
  });
});
