import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { ClusterMonitor } from '../../src/dashboard/cluster-monitor.js';
import { startDashboard, type DashboardServer } from '../../src/dashboard/dashboard-server.js';
import type { ClusterSnapshot, DashboardHello } from '../../src/dashboard/snapshot.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { rootState } from '../runtime/apps/compositions.js';
import { waitFor, withDeadline } from '../support/wait.js';

const COMPOSITIONS: TaskRef = { module: new URL('../runtime/apps/compositions.ts', import.meta.url).href, export: 'default' };

/** Reads server-sent events from `url` until `until` returns true for one of them. */
function readEvents(url: string, until: (event: string, data: unknown) => boolean): Promise<Array<{ event: string; data: unknown }>> {
  return new Promise((resolve, reject) => {
    const seen: Array<{ event: string; data: unknown }> = [];
    const req = request(url, (res) => {
      assert.equal(res.headers['content-type'], 'text/event-stream');
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!event || data === undefined) continue;
          const parsed = JSON.parse(data) as unknown;
          seen.push({ event, data: parsed });
          if (until(event, parsed)) {
            req.destroy();
            resolve(seen);
          }
        }
      });
    });
    req.on('error', (err) => (seen.length > 0 ? undefined : reject(err)));
    req.end();
  });
}

async function get(url: string, init?: RequestInit): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(url, init);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** Value of a Prometheus sample line `name{labels} value` (labels matched as a substring). */
function sample(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if ((rest.startsWith('{') || rest.startsWith(' ')) && rest.includes(labels)) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('dashboard server and cluster monitor (embedded cluster)', () => {
  let cluster: Cluster;
  let monitor: ClusterMonitor;
  let server: DashboardServer;

  before(async () => {
    cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 3, progressIntervalMs: 50 });
    monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 50 });
    await monitor.start();
    server = await startDashboard(monitor, { port: 0 });
  });

  after(async () => {
    await server.close();
    await monitor.stop();
    await cluster.close();
  });

  it('serves the page, its assets and uPlot locally; nothing else', async () => {
    const page = await get(server.url);
    assert.equal(page.status, 200);
    assert.match(page.type ?? '', /text\/html/);
    const scripts = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(scripts.length > 0, 'the page references its assets');
    for (const ref of scripts) {
      assert.ok(!/^https?:/.test(ref), `asset ${ref} is local`);
      assert.equal((await get(new URL(ref, server.url).href)).status, 200, ref);
    }
    assert.equal((await get(new URL('/assets/vendor/uPlot.iife.min.js', server.url).href)).status, 200);
    assert.equal((await get(new URL('/assets/../package.json', server.url).href)).status, 404);
    assert.equal((await get(new URL('/assets/%2e%2e%2fpackage.json', server.url).href)).status, 404);
    assert.equal((await get(new URL('/nope', server.url).href)).status, 404);
    assert.equal((await get(new URL('/api/snapshot', server.url).href, { method: 'POST', body: 'x'.repeat(10_000) })).status, 413, 'oversized bodies are refused before routing');
    assert.equal((await get(new URL('/api/snapshot', server.url).href, { method: 'DELETE' })).status, 404);
  });

  it('follows a job: nodes, queue, completions (exact at the end) and metrics', { timeout: 60_000 }, async () => {
    const job = await cluster.submit(COMPOSITIONS, rootState(19, 3000));
    await waitFor(() => (monitor.snapshot?.jobs.some((j) => j.id === job.id && j.state === 'running' && j.nodes === 2) ?? false), 'the monitor to see the job on both nodes', 20_000);
    const busy = monitor.snapshot!;
    assert.deepEqual(busy.nodes.map((n) => n.job), [job.id, job.id]);
    // Each node publishes its job's kind and that kind's own figures (the page's kinds panel shows them).
    await waitFor(() => monitor.snapshot!.nodes.every((n) => n.kind === 'task-pool' && typeof n.figures.checkpoints === 'number'), 'the kind and its figures in the snapshot');
    const total = await job.result<number>();
    assert.equal(total, 2 ** 19);
    const outcome = await job.outcome();
    assert.equal(outcome.status, 'done');
    await waitFor(() => monitor.snapshot?.jobs.find((j) => j.id === job.id)?.state === 'done', 'the monitor to see the job done');
    const done = monitor.snapshot!.jobs.find((j) => j.id === job.id)!;
    assert.equal(done.tasksDone, outcome.status === 'done' ? outcome.completions : -1);
    assert.ok(done.finishedAt !== null);
    // Every node saw traffic on the coordination service for this job.
    const metrics = await get(new URL('/metrics', server.url).href);
    assert.equal(metrics.status, 200);
    assert.match(metrics.type ?? '', /text\/plain/);
    assert.equal(sample(metrics.body, 'tidepool_nodes'), 2);
    assert.equal(sample(metrics.body, 'tidepool_jobs', 'state="done"'), 1);
    assert.equal(sample(metrics.body, 'tidepool_job_tasks_completed', `job="${job.id}"`), done.tasksDone);
    assert.match(metrics.body, /^# TYPE tidepool_steals_total counter$/m);
    assert.match(metrics.body, /^tidepool_monitor_process_cpu_seconds_total /m);
  });

  it('answers /healthz, and /readyz as a node does: 503 with the reason before the first read of the cluster and while reads fail', { timeout: 30_000 }, async () => {
    assert.deepEqual(JSON.parse((await get(new URL('/readyz', server.url).href)).body), { ready: true });
    const client = await connect('embedded:dashboard-readyz');
    const own = new ClusterMonitor(client, { intervalMs: 60_000 });
    const probes = await startDashboard(own, { port: 0, metrics: false });
    try {
      const readyz = async () => {
        const r = await get(new URL('/readyz', probes.url).href);
        return { status: r.status, body: JSON.parse(r.body) as { ready: boolean; reason?: string } };
      };
      assert.deepEqual(await readyz(), { status: 503, body: { ready: false, reason: 'the monitor has not read the cluster yet' } });
      await own.tick();
      assert.deepEqual(await readyz(), { status: 200, body: { ready: true } });
      await client.close();
      await own.tick(); // a read on a closed session fails
      const failing = await readyz();
      assert.equal(failing.status, 503);
      assert.match(failing.body.reason ?? '', /^the latest read of the cluster failed: /);
      assert.deepEqual(JSON.parse((await get(new URL('/healthz', probes.url).href)).body), { ok: true });
    } finally {
      await probes.close();
      await own.stop();
    }
  });

  it('pushes snapshots: a new node shows up in the stream, and the stream starts with the timeline', { timeout: 30_000 }, async () => {
    const before = (await get(new URL('/api/snapshot', server.url).href));
    const hello = JSON.parse(before.body) as DashboardHello;
    assert.equal(hello.snapshot.nodes.length, 2);
    assert.ok(hello.history.length > 0);
    // The node is added once the stream has said hello; the pushed snapshot with three nodes may arrive
    // before addNodes resolves, so both are awaited, each on its own, and compared afterwards.
    let adding = undefined as Promise<string[]> | undefined;
    const seen = await withDeadline(readEvents(new URL('/api/events', server.url).href, (event, data) => {
      if (event === 'hello') adding = cluster.addNodes(1);
      return event === 'snapshot' && (data as ClusterSnapshot).nodes.length === 3;
    }), 'a snapshot with three nodes', 20_000);
    assert.ok(adding, 'the stream said hello');
    const added = await withDeadline(adding, 'addNodes to resolve', 20_000);
    assert.equal(seen[0]!.event, 'hello');
    const last = seen.at(-1)!.data as ClusterSnapshot;
    assert.ok(last.nodes.some((n) => n.id === added[0]), 'the added node is in the pushed snapshot');
    assert.equal(last.point.nodes, 3);
  });

  it('refuses event streams beyond its limit', async () => {
    const small = await startDashboard(monitor, { port: 0, maxStreams: 1, metrics: false });
    try {
      const first = new AbortController();
      const open = await fetch(new URL('/api/events', small.url), { signal: first.signal });
      assert.equal(open.status, 200);
      const second = await get(new URL('/api/events', small.url).href);
      assert.equal(second.status, 503);
      assert.match(second.body, /too many/);
      assert.equal((await get(new URL('/metrics', small.url).href)).status, 404);
      first.abort();
    } finally {
      await small.close();
    }
  });
});
