/**
 * The dashboard end to end: an embedded cluster, its monitor and dashboard server, and the page in
 * headless Chromium. The page must follow the cluster live: nodes joining and leaving, a job
 * running to its end, the charts drawn, and no errors in the page. Every wait is on a condition
 * in the page or in the cluster, under a deadline: no sleeps.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ClusterMonitor } from '../../src/dashboard/cluster-monitor.js';
import { startDashboard, type DashboardServer } from '../../src/dashboard/dashboard-server.js';
import { Cluster, type JobHandle } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { collectPageProblems, launchBrowser, screenshot } from '../support/browser.js';
import { withDeadline } from '../support/wait.js';
import type { GateInput, GatedRange } from './apps/gated-search.js';

const GATED: TaskRef = { module: new URL('./apps/gated-search.ts', import.meta.url).href, export: 'default' };
/** Items of the search: hours at the closed gate's crawl, milliseconds once it opens. */
const ITEMS = 200_000;
/**
 * Deadline of each wait for the page to show something (the monitor ticks every 200 ms). Generous: under
 * stress-ng on a shared 2-core machine (load average above 20) a row took 30 s to show through the
 * monitor, the event stream, Chromium and Playwright's protocol; the wait fails only when nothing shows.
 */
const SHOW = { timeout: 60_000 };
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');
/** The page at the end, mid-run with three nodes in the job, and when the test fails. */
const SCREENSHOT = join(ARTIFACTS, 'dashboard.png');
const RUNNING_SCREENSHOT = join(ARTIFACTS, 'dashboard-running.png');
const FAILURE_SCREENSHOT = join(ARTIFACTS, 'dashboard-failure.png');

describe('dashboard page (headless Chromium)', () => {
  let cluster: Cluster | undefined;
  let monitor: ClusterMonitor | undefined;
  let server: DashboardServer | undefined;
  let browser: Browser | undefined;
  let gateDir: string | undefined;

  before(async () => {
    gateDir = await mkdtemp(join(tmpdir(), 'tidepool-dashboard-'));
    cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 200 });
    monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 200 });
    await monitor.start();
    server = await startDashboard(monitor, { host: '127.0.0.1', port: 0 });
    browser = await launchBrowser();
  });

  after(async () => {
    // The browser first, so that its event stream is not cut off under a live page.
    await browser?.close();
    await server?.close();
    await monitor?.stop();
    await cluster?.close();
    if (gateDir) await rm(gateDir, { recursive: true, force: true });
  });

  it('follows nodes joining and leaving and a job running to its end', { timeout: 300_000 }, async () => {
    assert.ok(cluster && server && browser && gateDir);
    const gate = join(gateDir, 'open');
    const input: GateInput = { gate, holdMs: 2, sliceMs: 100 };
    const root: GatedRange = { lo: 0, hi: ITEMS, count: 0 };
    const job: JobHandle = await cluster.submit(GATED, root, { input });
    const initial = cluster.localNodes().map((n) => n.id);
    assert.equal(initial.length, 2);

    const page: Page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const problems = collectPageProblems(page);
    try {
      await page.goto(server.url, { waitUntil: 'load', timeout: SHOW.timeout });
      await page.waitForSelector('#status[data-connected="true"]', SHOW);

      // Both nodes, and the job running on them.
      for (const id of initial) await page.waitForSelector(`#nodes tr[data-node-id="${id}"]`, SHOW);
      await page.waitForSelector(`#jobs tr[data-job-id="${job.id}"][data-state="running"]`, SHOW);
      // The kinds panel: a table for the task pool, a row per node in the job, its figures as columns.
      for (const id of initial) await page.waitForSelector(`#kinds [data-kind="task-pool"] tr[data-node="${id}"]`, SHOW);
      assert.match(await page.locator('#kinds [data-kind="task-pool"] thead').innerText(), /checkpoints/i); // headers are shown in capitals
      await waitForText(page, '#cluster-size', '2');
      // A search job: its bound is listed with the job and charted.
      await page.locator(`#jobs tr[data-job-id="${job.id}"] td.vars`, { hasText: /^bound = / }).waitFor(SHOW);
      await page.waitForSelector('#chart-incumbent canvas', { ...SHOW, state: 'visible' });
      assert.equal(await page.isHidden('#no-search'), true, 'no "no search job" note while a search job runs');

      // A node joins: a third row, and the header says 3. Given to the job, its row shows the job.
      const [added] = await cluster.addNodes(1);
      assert.ok(added);
      await page.waitForSelector(`#nodes tr[data-node-id="${added}"]`, SHOW);
      await waitForText(page, '#cluster-size', '3');
      await cluster.scale(job.id, 3);
      await waitForText(page, `#nodes tr[data-node-id="${added}"] td:nth-child(3)`, job.id);
      await waitForText(page, '#active-nodes', '3');
      await screenshot(page, RUNNING_SCREENSHOT);

      // It stops gracefully (drains out of the job, then leaves): its row goes, the header says 2.
      await cluster.stopNode(added);
      await page.waitForSelector(`#nodes tr[data-node-id="${added}"]`, { ...SHOW, state: 'detached' });
      await waitForText(page, '#cluster-size', '2');
      for (const id of initial) assert.equal(await page.locator(`#nodes tr[data-node-id="${id}"]`).count(), 1, `${id} is still listed`);

      // Open the gate: the job finishes, exactly, and its row says done.
      await writeFile(gate, '');
      const outcome = await withDeadline(job.outcome(), 'the job to finish', 60_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.equal(await job.result<number>(), ITEMS);
      await page.waitForSelector(`#jobs tr[data-job-id="${job.id}"][data-state="done"]`, SHOW);

      // The charts are drawn; the elasticity timeline went up to 3 nodes.
      for (const chart of ['#chart-throughput', '#chart-size', '#chart-incumbent']) {
        assert.equal(await page.locator(`${chart} canvas`).count(), 1, `${chart} has a canvas`);
      }
      await waitForText(page, '#status-text', 'live');
      await screenshot(page, SCREENSHOT);
      problems.assertNone();
    } catch (err) {
      // What the page showed when it went wrong, and what it reported.
      await screenshot(page, FAILURE_SCREENSHOT).catch(() => undefined);
      if (problems.errors.length > 0) throw new Error(`${(err as Error).message}\npage problems:\n${problems.errors.join('\n')}`, { cause: err });
      throw err;
    } finally {
      await page.close();
    }
  });
});

/** Waits until the element `selector` shows exactly `text`. */
function waitForText(page: Page, selector: string, text: string): Promise<void> {
  return page.locator(selector, { hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor(SHOW);
}
