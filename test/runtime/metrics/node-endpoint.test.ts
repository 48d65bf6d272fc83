/**
 * A node's monitoring endpoint over real HTTP: /metrics as Prometheus text whose histograms count what
 * the node did, /healthz and /readyz following the node's phase and its coordination session, and
 * labels that stay bounded however many jobs a node runs.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect, embeddedServer } from '../../../src/coord/connect.js';
import { GlobalVariables } from '../../../src/coord/recipes/global-variables.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import { newNodeId, TidepoolNode } from '../../../src/runtime/node/node.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { InProcessNetwork, InProcessTransport } from '../../../src/transport/in-process-transport.js';
import { parsePrometheusText, samplesOf, valueOf, type Family } from '../../support/prometheus-text.js';
import { waitFor } from '../../support/wait.js';
import { ClusterSecret } from '../../../src/util/cluster-secret.js';

const TIMED_FAN: TaskRef = { module: new URL('../apps/timed-fan.ts', import.meta.url).href, export: 'default' };
const SLEEPY_FAN: TaskRef = { module: new URL('../apps/sleepy-fan.ts', import.meta.url).href, export: 'default' };
const HELD: TaskRef = { module: new URL('./apps/held.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };

async function scrape(node: TidepoolNode): Promise<Map<string, Family>> {
  const res = await fetch(`${node.metricsUrl!}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

async function probe(node: TidepoolNode, path: '/healthz' | '/readyz'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${node.metricsUrl!}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a node\'s /metrics, /healthz and /readyz', () => {
  it('histograms count what ran: task durations as many as tasks, steal latencies on the node that stole', T, async () => {
    // One root task spawns the rest on one node: the other node gets work only by stealing.
    const fanout = 30;
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 5, metrics: {}, kindOptions: { 'task-pool': { steal: { requestTimeoutMs: 60_000 } } } });
    try {
      const job = await cluster.submit(TIMED_FAN, { fanout, ms: 15, root: true });
      assert.equal(await job.result<number>(), fanout + 1);
      await waitFor(() => cluster.localNodes().every((n) => n.currentJob === undefined), 'both nodes to leave the finished job');
      const scraped = await Promise.all(cluster.localNodes().map(scrape));
      const kind = { kind: 'task-pool' };
      const sum = (name: string, match: Record<string, string> = {}) => scraped.reduce((a, f) => a + valueOf(f, name, { ...kind, ...match }), 0);
      assert.equal(sum('tidepool_task_duration_seconds_count'), fanout + 1, 'one run time per task');
      assert.equal(sum('tidepool_node_tasks_completed_total'), fanout + 1);
      // Each busy-looped child ran ≥ 15 ms: at least fanout × 15 ms of run time in all.
      assert.ok(sum('tidepool_task_duration_seconds_sum') >= fanout * 0.015, `sum ${sum('tidepool_task_duration_seconds_sum')}`);
      const stole = scraped.filter((f) => valueOf(f, 'tidepool_node_steals_total', { ...kind, direction: 'in' }) > 0);
      assert.ok(stole.length >= 1, 'a node stole');
      for (const f of stole) {
        const stolen = valueOf(f, 'tidepool_node_steals_total', { ...kind, direction: 'in' });
        assert.equal(valueOf(f, 'tidepool_steal_latency_seconds_count', { ...kind, outcome: 'task' }), stolen, 'one latency per steal that got a task');
      }
      for (const f of scraped) assert.equal(valueOf(f, 'tidepool_node_jobs_total', { ...kind, end: 'finished' }), 1);
    } finally {
      await cluster.close();
    }
  });

  it('/healthz is 200 while alive; /readyz 200 once joined, 503 while the node drains, 200 again after', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 3, metrics: {} });
    try {
      for (const node of cluster.localNodes()) {
        assert.deepEqual(await probe(node, '/healthz'), { status: 200, body: { ok: true } });
        assert.deepEqual(await probe(node, '/readyz'), { status: 200, body: { ready: true } });
      }
      const job = await cluster.submit(HELD, { label: 'held' }, { nodes: 2 });
      let holder: TidepoolNode | undefined;
      await waitFor(() => (holder = cluster.localNodes().find((n) => (n.load()?.running ?? 0) > 0)) !== undefined, 'the held task to run');
      // While it runs: the job it takes part in, and its kind's own figures (the task pool's), by name.
      await waitFor(async () => samplesOf(await scrape(holder!), 'tidepool_node_kind_figure', { kind: 'task-pool' }).length > 0, 'the task pool\'s figures on the node');
      const running = await scrape(holder!);
      assert.deepEqual(samplesOf(running, 'tidepool_node_job').map((s) => s.labels), [{ job: job.id, kind: 'task-pool' }]);
      assert.deepEqual(samplesOf(running, 'tidepool_node_kind_figure').map((s) => s.labels.figure).sort(), ['checkpoints', 'failedTasks', 'placements', 'retries']);
      assert.equal(valueOf(running, 'tidepool_node_kind_figure', { figure: 'failedTasks' }), 0);
      const draining = holder!.drain(); // waits for the held task: it does not migrate
      await waitFor(async () => (await probe(holder!, '/readyz')).status === 503, 'readyz to turn 503 while draining');
      assert.deepEqual((await probe(holder!, '/readyz')).body, { ready: false, reason: 'the node is draining' });
      assert.equal((await probe(holder!, '/healthz')).status, 200, 'a draining node is alive');
      const gauges = await scrape(holder!);
      assert.equal(valueOf(gauges, 'tidepool_node_ready'), 0);
      const vars = new GlobalVariables(cluster.coordination, jobPaths(job.id).vars);
      await vars.define('go', { rule: 'max' });
      await vars.setVar('go', 1);
      await draining;
      vars.stop();
      assert.equal((await probe(holder!, '/readyz')).status, 200, 'drained out of its job, the node takes work again');
      assert.equal(await job.result<string>(), 'held');
      const url = holder!.metricsUrl!;
      await cluster.stopNode(holder!.id);
      await assert.rejects(fetch(`${url}/healthz`), 'a stopped node serves nothing');
    } finally {
      await cluster.close();
    }
  });

  it('/readyz is 503 while the coordination session is disconnected; /healthz turns 503 once it expired', T, async () => {
    const name = `metrics-${randomBytes(4).toString('hex')}`;
    const secret = ClusterSecret.random();
    const client = await connect(`embedded:${name}`, { secret });
    const id = newNodeId();
    const node = await TidepoolNode.start({ client, transport: new InProcessTransport(id, InProcessNetwork.get(name)), workers: 1, nodeId: id, secret, metrics: { port: 0, processMetrics: false } });
    try {
      assert.equal((await probe(node, '/readyz')).status, 200);
      embeddedServer(name).disconnect(client.sessionId);
      await waitFor(async () => (await probe(node, '/readyz')).status === 503, 'readyz to turn 503');
      assert.deepEqual((await probe(node, '/readyz')).body, { ready: false, reason: 'the coordination session is disconnected' });
      assert.equal((await probe(node, '/healthz')).status, 200);
      embeddedServer(name).reconnect(client.sessionId);
      await waitFor(async () => (await probe(node, '/readyz')).status === 200, 'readyz to be 200 again');
      embeddedServer(name).expire(client.sessionId);
      await waitFor(async () => (await probe(node, '/healthz')).status === 503, 'healthz to turn 503');
      assert.deepEqual((await probe(node, '/healthz')).body, { ok: false, reason: 'the coordination session is expired' });
      const other = await fetch(`${node.metricsUrl!}/other`);
      assert.equal(other.status, 404);
      const post = await fetch(`${node.metricsUrl!}/metrics`, { method: 'POST', body: 'x' });
      assert.equal(post.status, 405);
    } finally {
      await node.crash();
      await client.close();
    }
  });

  it('labels stay bounded: after 12 jobs a node shows the same series as after 2, and no job id but its current one', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1, seed: 9, metrics: { processMetrics: false } });
    const [node] = cluster.localNodes();
    const ids: string[] = [];
    const series = (families: Map<string, Family>) => new Map([...families].map(([name, f]) => [name, f.samples.length]));
    const run = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const job = await cluster.submit(SLEEPY_FAN, { fanout: 20, spin: 100, root: true });
        assert.equal(await job.result<number>(), 21);
        ids.push(job.id);
        await waitFor(() => node!.currentJob === undefined, 'the node to leave the job');
      }
    };
    try {
      await run(2);
      const early = series(await scrape(node!));
      await run(10);
      const late = await scrape(node!);
      assert.deepEqual(series(late), early, 'series per metric after 12 jobs = after 2');
      const labelValues = [...late.values()].flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
      for (const id of ids) assert.ok(!labelValues.includes(id), `job id ${id} is no label value of an idle node`);
      assert.equal(valueOf(late, 'tidepool_node_jobs_total', { kind: 'task-pool', end: 'finished' }), 12);
      assert.equal(valueOf(late, 'tidepool_node_tasks_completed_total', { kind: 'task-pool' }), 12 * 21, 'counters keep growing across jobs');
      assert.equal(valueOf(late, 'tidepool_task_duration_seconds_count', { kind: 'task-pool' }), 12 * 21);
      assert.deepEqual(samplesOf(late, 'tidepool_node_job'), [], 'an idle node takes part in no job');
    } finally {
      await cluster.close();
    }
  });
});
