/**
 * The kinds' views over time, end to end: a real job of each layer on an embedded cluster, its monitor
 * and dashboard server, and the page in headless Chromium. Each test reads what the page's charts
 * hold (the vega views' data, not pixels) and checks it against what the layer itself produced, so a
 * layer that stops publishing its figures or events fails its test. Every wait is on a condition
 * under a deadline: no sleeps.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { ClusterMonitor } from '../../src/dashboard/cluster-monitor.js';
import { startDashboard } from '../../src/dashboard/dashboard-server.js';
import { submitIterative } from '../../src/frameworks/iterative/run-iterative.js';
import { ResourceManager } from '../../src/frameworks/malleable/manager/resource-manager.js';
import { submitMalleable } from '../../src/frameworks/malleable/submit.js';
import { requestJob } from '../../src/runtime/client/job-requests.js';
import { Distribution } from '../../src/frameworks/service/distribution.js';
import { startService } from '../../src/frameworks/service/service-server.js';
import { loadWorkflow } from '../../src/frameworks/workflow/load-workflow.js';
import { submitWorkflow } from '../../src/frameworks/workflow/run-workflow.js';
import { Cluster, type EmbeddedClusterOptions } from '../../src/runtime/client/cluster.js';
import { cancelJob } from '../../src/runtime/job/outcome.js';
import { finishExactly, MECHANICS_ONLY, submit } from '../frameworks/malleable/manager/manager-scenario.js';
import { collectPageProblems, launchBrowser, screenshot } from '../support/browser.js';
import { openGate } from '../support/gate.js';
import { waitFor, withDeadline } from '../support/wait.js';

/** Deadline of each wait for the page (the monitor ticks every 200 ms; the machine is shared). */
const SHOW = 30_000;
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');
const CHECKSUM = { module: new URL('../frameworks/iterative/apps/checksum.ts', import.meta.url).href, export: 'default' };
const STENCIL = { module: new URL('../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };
const MONTAGE_25 = fileURLToPath(new URL('../data/workflows/pegasus-dax-2.1/Montage_25.xml', import.meta.url));

type Row = Record<string, unknown>;

describe('kinds over time on the dashboard (headless Chromium)', () => {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  /** An embedded cluster with its monitor, dashboard server and a page on it, for `body`. */
  async function onDashboard(name: string, opts: EmbeddedClusterOptions, body: (page: Page, cluster: Cluster) => Promise<void>): Promise<void> {
    const cluster = await Cluster.embedded({ progressIntervalMs: 200, ...opts });
    const monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 200 });
    await monitor.start();
    const server = await startDashboard(monitor, { host: '127.0.0.1', port: 0 });
    const page = await browser!.newPage({ viewport: { width: 1440, height: 1200 } });
    const problems = collectPageProblems(page);
    try {
      await page.goto(server.url, { waitUntil: 'load', timeout: SHOW });
      await page.waitForSelector('#status[data-connected="true"]', { timeout: SHOW });
      await body(page, cluster);
      await screenshot(page, join(ARTIFACTS, `dashboard-${name}.png`));
      problems.assertNone();
    } catch (err) {
      await screenshot(page, join(ARTIFACTS, `dashboard-${name}-failure.png`)).catch(() => undefined);
      if (problems.errors.length > 0) throw new Error(`${(err as Error).message}\npage problems:\n${problems.errors.join('\n')}`, { cause: err });
      throw err;
    } finally {
      await page.close();
      await server.close();
      await monitor.stop();
      await cluster.close();
    }
  }

  it('iterative: per-thread and per-process speed over time, finish times per thread and process', { timeout: 120_000 }, async () => {
    await onDashboard('iterative', { nodes: 2, workers: 2 }, async (page, cluster) => {
      // 128 blocks of 2 × 25 ms of sleep on four threads: about 1.6 s, several samples.
      const job = await submitIterative(cluster, CHECKSUM, {
        iterations: 12_800, params: { work: 2, sleepMs: 25 }, blockSize: 100, chunkSize: 50, balance: 'ruper', nodes: 2,
        ruper: { checkpointInterval: 0.1, minRemaining: 0.02 },
      });
      const nodes = cluster.localNodes().map((n) => n.id).sort();
      const chart = (name: string) => `[data-origin="iterative"] [data-job="${job.id}"] [data-chart="${name}"]`;
      // Each thread's speed: a line per node and thread, measured at two times at least.
      const threads = nodes.flatMap((n) => [`${n} · 0`, `${n} · 1`]);
      await waitForRows(page, chart('speed.*'), (rows) => threads.every((s) => rows.filter((r) => r.series === s && Number(r.value) > 0).length >= 2), 'every thread\'s speed over time');
      const result = await withDeadline(job.result<{ n: number }>(), 'the iterative job', 60_000);
      assert.equal(result.n, 12_800);

      // Each process's speed is its threads' (the layer rounds each figure: within one per thread).
      const perThread = await rowsOf(page, chart('speed.*'));
      const perProcess = await rowsOf(page, chart('speed'));
      let compared = 0;
      for (const n of nodes) {
        for (const p of perProcess.filter((r) => r.series === n)) {
          const own = perThread.filter((r) => r.t === p.t && String(r.series).startsWith(`${n} · `));
          if (own.length !== 2) continue;
          assert.ok(Math.abs(own.reduce((a, r) => a + Number(r.value), 0) - Number(p.value)) <= 2, `${n} at ${String(p.t)}: ${Number(p.value)} vs ${own.map((r) => Number(r.value)).join(' + ')}`);
          compared++;
        }
      }
      assert.ok(compared >= 2, `process speeds compared with their threads' at ${compared} times`);
      const all = perProcess.filter((r) => r.series === 'all nodes');
      assert.ok(all.length > 0, 'the job\'s total speed');

      // Finish times: a span per thread and per process, ended once the job is over.
      const finish = '[data-origin="iterative"] [data-list="finish"]';
      const lanes = [...nodes, ...nodes.flatMap((n) => [`${n} · thread 0`, `${n} · thread 1`])].sort();
      await waitForRows(page, finish, (rows) => lanes.every((l) => rows.some((r) => r.lane === l && r.job === job.id && r.open === false)), 'every thread\'s and process\'s finish time');
      const spans = (await rowsOf(page, finish)).filter((r) => r.job === job.id);
      assert.deepEqual(spans.map((r) => r.lane).sort(), lanes);
      for (const n of nodes) {
        const own = spans.filter((r) => String(r.lane).startsWith(`${n} · thread`));
        const process = spans.find((r) => r.lane === n)!;
        assert.equal(Number(process.end), Math.max(...own.map((r) => Number(r.end))), `${n} finished with its last thread`);
        for (const r of own) assert.ok(Number(r.end) >= Number(r.start), `${String(r.lane)} ends after it starts`);
      }
    });
  });

  it('workflow: tasks by state over time and a Gantt of tasks per worker', { timeout: 120_000 }, async () => {
    const shared = await mkdtemp(join(tmpdir(), 'tidepool-dashboard-wf-'));
    try {
      await onDashboard('workflow', { nodes: 2, workers: 1 }, async (page, cluster) => {
        const wf = await loadWorkflow(MONTAGE_25);
        // Recorded runtimes × 0.02: about 4.5 s of work on two workers, a critical path near 1 s.
        const job = await submitWorkflow(cluster, wf, { file: MONTAGE_25, shared, replay: 0.02, nodes: 2 });
        const outcome = await withDeadline(job.outcome(), 'the workflow', 90_000);
        assert.equal(outcome.status, 'done', JSON.stringify(outcome));

        // Tasks by state, summed over the workers, sampled while it ran.
        const states = `[data-origin="workflow"] [data-job="${job.id}"] [data-chart="tasks.*"]`;
        await waitForRows(page, states, (rows) => new Set(rows.map((r) => r.t)).size >= 2 && rows.some((r) => r.series === 'done' && Number(r.value) > 0), 'the tasks by state over time');
        const rows = await rowsOf(page, states);
        assert.deepEqual([...new Set(rows.map((r) => r.series))].sort(), ['done', 'ready', 'running', 'waiting']);
        const byTime = new Map<number, Row[]>();
        for (const r of rows) byTime.set(Number(r.t), [...(byTime.get(Number(r.t)) ?? []), r]);
        let lastDone = 0;
        for (const t of [...byTime.keys()].sort((a, b) => a - b)) {
          const done = Number(byTime.get(t)!.find((r) => r.series === 'done')?.value ?? 0);
          assert.ok(done >= lastDone && done <= wf.tasks.length, `tasks done never decrease, nor exceed the workflow's (${lastDone} then ${done})`);
          lastDone = done;
        }

        // The Gantt: the workflow's own tasks on the cluster's nodes, a task only after its parents.
        const gantt = '[data-origin="workflow"] [data-list="tasks"]';
        await waitForRows(page, gantt, (r) => r.filter((x) => x.job === job.id).length >= 5, 'tasks on the Gantt');
        const spans = (await rowsOf(page, gantt)).filter((r) => r.job === job.id);
        const nodes = cluster.localNodes().map((n) => n.id);
        const index = new Map(wf.tasks.map((t, i) => [t.id, i]));
        const at = new Map(spans.map((s) => [String(s.id), s]));
        for (const s of spans) {
          const task = wf.tasks[index.get(String(s.id)) ?? -1];
          assert.ok(task, `${String(s.id)} is a task of the workflow`);
          assert.equal(s.label, task.category);
          assert.ok(nodes.some((n) => String(s.lane) === n || String(s.lane).startsWith(`${n} ·`)), `${String(s.id)} ran on a node of the cluster (${String(s.lane)})`);
          assert.ok(Number(s.end) >= Number(s.start));
          for (const p of task.parents) {
            const parent = at.get(wf.tasks[p]!.id);
            if (parent) assert.ok(Number(s.start) >= Number(parent.end), `${task.id} started after its parent ${wf.tasks[p]!.id} ended`);
          }
        }
      });
    } finally {
      await rm(shared, { recursive: true, force: true });
    }
  });

  it('resource manager: nodes to jobs over time and each job\'s rescale events', { timeout: 120_000 }, async () => {
    await onDashboard('manager', { nodes: 3, workers: 1 }, async (page, cluster) => {
      const client = cluster.coordination;
      const manager = new ResourceManager(client, { id: 'm', policy: 'equipartition', ...MECHANICS_ONLY });
      await manager.start();
      const jobs: string[] = [];
      try {
        // A malleable task-pool job takes the pool; a rigid one arriving makes equipartition shrink it by a node (seed 003 Fig. 6).
        const malleable = await submit(cluster, 18, { flexibility: 'malleable', min: 1, max: 3 });
        jobs.push(malleable.id);
        const nodesOf = async (job: string) => (await rowsOf(page, '#chart-jobnodes')).filter((r) => r.job === job).map((r) => [Number(r.t), Number(r.nodes)] as const);
        await waitFor(async () => (await nodesOf(malleable.id)).some(([, n]) => n === 3), 'the malleable job on 3 nodes in the nodes-per-job chart', SHOW);
        const rigid = await submit(cluster, 16, { flexibility: 'rigid', nodes: 1 });
        jobs.push(rigid.id);

        const rescales = '[data-origin="manager.m"] [data-list="rescales"]';
        await waitForRows(page, rescales, (rows) => rows.some((r) => r.row === malleable.id && r.label === 'shrink' && typeof r.tRescaleMs === 'number') && rows.some((r) => r.row === rigid.id && r.label === 'launch'), 'the shrink with its T_rescale and the rigid job\'s launch');
        const events = await rowsOf(page, rescales);
        const of = (job: string) => events.filter((r) => r.row === job).map((r) => [r.label, r.nodes]);
        assert.deepEqual(of(malleable.id).slice(0, 2), [['launch', 3], ['shrink', 2]]);
        assert.deepEqual(of(rigid.id), [['launch', 1]]);

        await waitFor(async () => (await nodesOf(rigid.id)).some(([, n]) => n === 1), 'the rigid job on its node', SHOW);
        const shrunk = (await nodesOf(malleable.id)).find(([, n]) => n === 2);
        const started = (await nodesOf(rigid.id)).find(([, n]) => n === 1);
        assert.ok(shrunk && started && started[0] >= shrunk[0], 'the rigid job holds a node only once the malleable job gave one up');
        const marks = await rowsOf(page, '#chart-jobnodes', 'marks');
        for (const job of jobs) assert.ok(marks.some((m) => m.job === job && m.label === 'launch'), `${job}'s launch is marked on the chart`);
        await finishExactly(client, [{ id: malleable.id, n: 18 }, { id: rigid.id, n: 16 }]);
      } finally {
        // Held tasks wait for their gate: opened, so that a failed check does not leave them blocking the cluster's close.
        for (const job of jobs) await openGate(client, job).then(() => cancelJob(client, job)).catch(() => undefined);
        await manager.stop();
      }
    });
  });

  it('malleable: each rescale\'s phases (lb, checkpoint, reconnect, restore) as the leader measured them, on the page and in /api/snapshot', { timeout: 120_000 }, async () => {
    await onDashboard('malleable', { nodes: 2, workers: 1 }, async (page, cluster) => {
      const params = { grid: 32, blocks: 4, iterations: 40 };
      // Shrinks to 1 at iteration 10, expands to 2 at 20, and waits at 30 until resumed: its rescales stay on the page meanwhile.
      const job = await submitMalleable(cluster, STENCIL, params, { nodes: 2, runtime: { rescaleAt: [{ iteration: 10, nodes: 1 }, { iteration: 20, nodes: 2 }], pauseAt: [30] } });
      const view = '[data-origin="malleable"] [data-list="rescale-phases"]';
      const parts = ['lb', 'checkpoint', 'reconnect', 'restore'];
      const complete = (rows: Row[]) => { const ids = new Set(rows.map((r) => r.id)); return ids.size === 2 && [...ids].every((id) => parts.every((p) => rows.some((r) => r.id === id && r.part === p))); };
      await waitForRows(page, view, complete, 'the shrink and the expand with their four phases');
      const rows = await rowsOf(page, view);
      const snapshot = await (await fetch(new URL('api/snapshot', page.url()))).json() as { events?: Array<{ origin: string; list: string; events: Array<{ id: string; job?: string; values?: Record<string, number> }> }> };
      const listed = snapshot.events?.find((l) => l.origin === 'malleable' && l.list === 'rescale-phases')?.events ?? [];
      await requestJob(cluster.coordination, job.id, 'resume');
      const { stats } = await withDeadline(job.result(), 'the stencil\'s result', 60_000);
      const rescales = stats.rescales.filter((r) => r.kind !== 'none');
      assert.deepEqual(rescales.map((r) => [r.kind, r.nodes.length]), [['shrink', 1], ['expand', 2]]);
      const ids = [...new Set(rows.map((r) => String(r.id)))].sort((a, b) => Number(rows.find((r) => r.id === a)!.at) - Number(rows.find((r) => r.id === b)!.at));
      rescales.forEach((r, i) => {
        assert.match(ids[i]!, new RegExp(`^${i + 1} ${r.kind} → ${r.nodes.length} @${r.iteration}$`), `rescale ${i + 1} is named by its kind, size and iteration`);
        for (const part of parts) {
          const measured = r.phases[part as keyof typeof r.phases];
          const drawn = Number(rows.find((x) => x.id === ids[i] && x.part === part)!.value);
          assert.ok(Math.abs(drawn - measured) <= 0.001, `${ids[i]} ${part}: ${drawn} ms on the page, ${measured} ms in the job's stats`);
          assert.equal(listed.find((e) => e.id === ids[i])?.values?.[part], drawn, `${ids[i]} ${part} in /api/snapshot`);
        }
        assert.ok(Math.abs(parts.reduce((a, p) => a + r.phases[p as keyof typeof r.phases], 0) - r.tRescaleMs) <= Math.max(1, 0.05 * r.tRescaleMs), `${ids[i]}: the phases make up T_rescale`);
      });
      assert.ok(listed.every((e) => e.job === job.id), 'the events name their job');
    });
  });

  it('service: the cost breakdown of recent batches', { timeout: 120_000 }, async () => {
    await onDashboard('service', { nodes: 1, workers: 2 }, async (page, cluster) => {
      const token = 'dashboard-test-token-0123456789';
      const service = await startService({ cluster, insecure: true, token, port: 0, host: '127.0.0.1', limits: { timeoutMs: 60_000, memoryMb: 128 } });
      const dist = await Distribution.connect(service.url, { token });
      try {
        const batches: { executionMs: number; serializationMs: number }[] = [];
        for (const size of [3, 5]) {
          const tasks = Array.from({ length: size }, (_, i) => dist.task(() => i * i));
          await dist.start(tasks);
          assert.deepEqual(await Promise.all(tasks.map((t) => t.result)), Array.from({ length: size }, (_, i) => i * i));
          await waitFor(() => dist.lastCosts !== undefined, 'the batch\'s costs');
          batches.push(dist.lastCosts!);
          dist.lastCosts = undefined;
        }
        const view = `[data-origin="service.${new URL(service.url).port}"] [data-list="batches"]`;
        const parts = ['diffingMs', 'dispatchMs', 'executionMs', 'serializationMs', 'transferMs'];
        const complete = (rows: Row[], id: unknown) => parts.every((p) => rows.some((r) => r.id === id && r.part === p));
        await waitForRows(page, view, (rows) => { const ids = new Set(rows.map((r) => r.id)); return ids.size === 2 && [...ids].every((id) => complete(rows, id)); }, 'both batches with the service\'s and the client\'s costs');
        const rows = await rowsOf(page, view);
        const ids = [...new Set(rows.map((r) => String(r.id)))].sort((a, b) => Number(rows.find((r) => r.id === a)!.at) - Number(rows.find((r) => r.id === b)!.at));
        // Each batch's execution (measured by the service) and serialization (by the client) as the client has them.
        ids.forEach((id, i) => {
          const value = (part: string) => Number(rows.find((r) => r.id === id && r.part === part)!.value);
          for (const part of ['executionMs', 'serializationMs'] as const) {
            assert.ok(Math.abs(value(part) - batches[i]![part]) <= 0.01, `batch ${id} ${part}: ${value(part)} on the dashboard, ${batches[i]![part]} at the client`);
          }
          for (const part of parts) assert.ok(value(part) >= 0, `batch ${id} ${part}`);
        });
      } finally {
        await dist.close();
        await service.close();
      }
    });
  });
});

/** A chart's data set (default `rows`) as the page's vega view holds it; [] before the chart exists. */
async function rowsOf(page: Page, selector: string, dataset = 'rows'): Promise<Row[]> {
  return page.evaluate(([sel, name]) => {
    // Runs in the page (this project compiles without the DOM's types).
    type Box = { vegaView?: { data(n: string): Row[] } } | null;
    const doc = (globalThis as unknown as { document: { querySelector(s: string): Box } }).document;
    const view = (doc.querySelector(`${sel} .vega`) ?? doc.querySelector(sel))?.vegaView;
    // Temporal fields are parsed into Dates in place: back to milliseconds, as published.
    return view ? view.data(name).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.getTime() : v]))) : [];
  }, [selector, dataset] as const);
}

function waitForRows(page: Page, selector: string, ok: (rows: Row[]) => boolean, what: string): Promise<void> {
  return waitFor(async () => ok(await rowsOf(page, selector)), `${what} (${selector})`, SHOW);
}
