import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SERIES } from '../../../src/runtime/metrics/histogram.js';
import { MetricsRegistry } from '../../../src/runtime/metrics/metrics-registry.js';
import { parsePrometheusText, samplesOf, valueOf } from '../../support/prometheus-text.js';

const DEF = { name: 'test_wait_seconds', help: 'A test "histogram" with \\ and\nnewline.', buckets: [0.1, 1, 10] } as const;

describe('metrics registry and histograms', () => {
  it('puts each observation in its bucket, cumulative in the text, with sum and count; a weighted observation counts that many', async () => {
    const registry = new MetricsRegistry({ processMetrics: false });
    const h = registry.histogram(DEF);
    for (const v of [0.05, 0.1, 0.5, 1, 5, 50]) h.observe(v);
    h.observe(2, undefined, 3); // three observations of 2 s
    const families = parsePrometheusText(await registry.text());
    const f = families.get('test_wait_seconds')!;
    assert.equal(f.type, 'histogram');
    assert.equal(f.help, 'A test "histogram" with \\\\ and\\nnewline.'); // HELP escapes \ and newline
    const buckets = samplesOf(families, 'test_wait_seconds_bucket').map((s) => [s.labels.le, s.value]);
    // le=0.1: 0.05 and 0.1 (bounds are inclusive); le=1: +0.5, 1; le=10: +5 and three 2s; +Inf: +50.
    assert.deepEqual(buckets, [['0.1', 2], ['1', 4], ['10', 8], ['+Inf', 9]]);
    assert.equal(valueOf(families, 'test_wait_seconds_count'), 9);
    assert.ok(Math.abs(valueOf(families, 'test_wait_seconds_sum') - (0.05 + 0.1 + 0.5 + 1 + 5 + 50 + 6)) < 1e-9);
  });

  it('a kind\'s view adds the kind label; one name is one histogram, and a different definition under it is refused', async () => {
    const registry = new MetricsRegistry({ processMetrics: false });
    const def = { ...DEF, labelNames: ['outcome'] as const };
    registry.forKind('task-pool').histogram(def).observe(0.5, { outcome: 'task' });
    registry.forKind('task-pool').histogram(def).observe(0.5, { outcome: 'empty' });
    registry.forKind('workflow').histogram(def).observe(0.5, { outcome: 'task' });
    const families = parsePrometheusText(await registry.text());
    const counts = samplesOf(families, 'test_wait_seconds_count').map((s) => `${s.labels.kind}/${s.labels.outcome}=${s.value}`).sort();
    assert.deepEqual(counts, ['task-pool/empty=1', 'task-pool/task=1', 'workflow/task=1']);
    assert.throws(() => registry.forKind('x').histogram({ ...def, buckets: [1, 2] }), /test_wait_seconds is already registered with other buckets or labels/);
    assert.throws(() => registry.forKind('x').histogram({ ...DEF, name: 'other_seconds', labelNames: ['kind'] }), /"kind" is added by the runtime/);
    assert.throws(() => registry.histogram({ ...DEF, name: 'bad_seconds', buckets: [1, 1] }), /strictly ascending/);
  });

  it(`keeps at most ${MAX_SERIES} label combinations per histogram and counts what it refuses`, async () => {
    const registry = new MetricsRegistry({ processMetrics: false });
    const h = registry.histogram({ ...DEF, labelNames: ['id'] });
    for (let i = 0; i < MAX_SERIES + 36; i++) h.observe(1, { id: `task-${i}` });
    const families = parsePrometheusText(await registry.text());
    assert.equal(samplesOf(families, 'test_wait_seconds_count').length, MAX_SERIES);
    assert.equal(valueOf(families, 'test_wait_seconds_count'), MAX_SERIES);
  });

  it('process figures come with the prefix asked for', async () => {
    const families = parsePrometheusText(await new MetricsRegistry({ prefix: 'tidepool_node_' }).text());
    assert.ok(families.has('tidepool_node_process_cpu_user_seconds_total'), [...families.keys()].join(' '));
    assert.ok([...families.keys()].every((name) => name.startsWith('tidepool_node_')));
  });
});
