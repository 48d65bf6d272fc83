/**
 * The frameworks record their histograms through the runtime's metrics (the runtime names none of
 * them): a malleable job's rescale time on the node that led it, a workflow's task waits on the members
 * that ran its tasks, and the service's batch latencies — read back as Prometheus text over HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { submitMalleable } from '../../src/frameworks/malleable/submit.js';
import type { GridResult } from '../../src/frameworks/malleable/apps/grid-blocks.js';
import { Distribution } from '../../src/frameworks/service/distribution.js';
import { startService } from '../../src/frameworks/service/service-server.js';
import { runWorkflow } from '../../src/frameworks/workflow/run-workflow.js';
import { WorkflowBuilder } from '../../src/frameworks/workflow/workflow-builder.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { MetricsRegistry } from '../../src/runtime/metrics/metrics-registry.js';
import { startMetricsServer } from '../../src/runtime/metrics/metrics-server.js';
import type { TidepoolNode } from '../../src/runtime/node/node.js';
import { parsePrometheusText, samplesOf, valueOf, type Family } from '../support/prometheus-text.js';
import { waitFor } from '../support/wait.js';
import { selfSignedCert } from './service/tls.js';

const STENCIL = { module: new URL('../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  return parsePrometheusText(await res.text());
}

const scrapeAll = (nodes: TidepoolNode[]) => Promise.all(nodes.map((n) => scrape(n.metricsUrl!)));

describe('framework histograms', () => {
  it('a malleable job that expands 2 → 3 at iteration 5 records one rescale time, labelled expand, with its phases', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, progressIntervalMs: 0, metrics: { processMetrics: false } });
    try {
      const job = await submitMalleable<GridResult>(cluster, STENCIL, { grid: 24, blocks: 4, iterations: 12 }, { nodes: 2, runtime: { rescaleAt: [{ iteration: 5, nodes: 3 }] } });
      const { stats } = await job.result();
      assert.deepEqual(stats.rescales.map((r) => r.kind), ['expand']);
      const scraped = await scrapeAll(cluster.localNodes());
      const sum = (name: string, match: Record<string, string>) => scraped.reduce((a, f) => a + valueOf(f, name, { kind: 'malleable', ...match }), 0);
      assert.equal(sum('tidepool_malleable_rescale_seconds_count', { change: 'expand' }), 1);
      assert.ok(Math.abs(sum('tidepool_malleable_rescale_seconds_sum', { change: 'expand' }) - stats.rescales[0]!.tRescaleMs / 1000) < 1e-9, 'the acknowledged T_rescale');
      for (const phase of ['lb', 'checkpoint', 'reconnect', 'restore']) assert.equal(sum('tidepool_malleable_rescale_phase_seconds_count', { phase }), 1, phase);
    } finally {
      await cluster.close();
    }
  });

  it('a workflow records one wait per task on the members that ran them', T, async () => {
    const shared = mkdtempSync(join(tmpdir(), 'wf-metrics-'));
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, metrics: { processMetrics: false } });
    try {
      writeFileSync(join(shared, 'in.txt'), 'b\na\nc\n');
      const builder = new WorkflowBuilder('waits')
        .command('sort', ['sort', 'in.txt', '-o', 'sorted.txt'], { inputs: ['in.txt'], outputs: ['sorted.txt'] })
        .command('first', ['sh', '-c', 'head -n 1 sorted.txt > first.txt'], { inputs: ['sorted.txt'], outputs: ['first.txt'] })
        .command('last', ['sh', '-c', 'tail -n 1 sorted.txt > last.txt'], { inputs: ['sorted.txt'], outputs: ['last.txt'] })
        .command('both', ['sh', '-c', 'cat first.txt last.txt > both.txt'], { inputs: ['first.txt', 'last.txt'], outputs: ['both.txt'] });
      const result = await runWorkflow(cluster, builder.build(), { builder, shared, nodes: 2 });
      assert.equal(result.tasks, 4);
      assert.equal(readFileSync(join(shared, 'both.txt'), 'utf8'), 'a\nc\n');
      const scraped = await scrapeAll(cluster.localNodes());
      const waits = scraped.reduce((a, f) => a + valueOf(f, 'tidepool_workflow_task_wait_seconds_count', { kind: 'workflow' }), 0);
      assert.equal(waits, 4, 'one wait per task');
    } finally {
      await cluster.close();
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it('the service records each batch\'s latency by how it ended', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1 });
    const registry = new MetricsRegistry({ processMetrics: false });
    const tls = selfSignedCert();
    const token = 'test-token-0123456789abcdef';
    const service = await startService({ cluster, tls, token, port: 0, metrics: registry });
    const endpoint = await startMetricsServer({ port: 0, registry, health: () => undefined, readiness: () => undefined });
    const dist = await Distribution.connect(service.url, { token, ca: tls.cert });
    try {
      for (const batch of [[1, 2], [3]]) {
        const tasks = batch.map((v) => dist.task(() => v * 7));
        await dist.start(tasks);
        assert.deepEqual(await Promise.all(tasks.map((t) => t.result)), batch.map((v) => v * 7));
      }
      await waitFor(async () => valueOf(await scrape(endpoint.url), 'tidepool_service_batch_latency_seconds_count', { state: 'done' }) === 2, 'two batch latencies');
      assert.deepEqual(samplesOf(await scrape(endpoint.url), 'tidepool_service_batch_latency_seconds_count').map((s) => s.labels), [{ state: 'done' }]);
    } finally {
      await dist.close();
      await service.close();
      await endpoint.close();
      await cluster.close();
    }
  });
});
