/** The page's chart rows (src/dashboard/assets/kind-views.js, a browser module with pure row builders). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

type Row = Record<string, unknown>;
interface KindViews {
  figureCharts(h: { samples: { t: number; nodes: Record<string, Record<string, number>> }[] }): { name: string; shape: string; rows: Row[] }[];
  spanRows(events: Row[], jobs: Map<string, { finishedAt: number | null }>): Row[];
  listShape(events: Row[]): string;
}
// A plain browser script without types: loaded by URL so that the compiler does not look for them.
const views = (await import(new URL('../../src/dashboard/assets/kind-views.js', import.meta.url).href)) as KindViews;

describe('kind views (page rows)', () => {
  it('draws x per node with their sum, x.<n> per node and index, x.<word> stacked over the nodes', () => {
    const charts = views.figureCharts({ samples: [
      { t: 1, nodes: { a: { speed: 3, 'speed.0': 1, 'speed.1': 2, 'tasks.ready': 4, 'tasks.done': 1 }, b: { speed: 5, 'speed.0': 5, 'tasks.ready': 2 } } },
      { t: 2, nodes: { a: { speed: 7 } } },
    ] });
    assert.deepEqual(charts.map((c) => [c.name, c.shape]), [['speed', 'lines'], ['speed.*', 'lines'], ['tasks.*', 'stack']]);
    const [speed, threads, tasks] = charts;
    assert.deepEqual(speed!.rows, [{ t: 1, series: 'a', value: 3 }, { t: 1, series: 'b', value: 5 }, { t: 1, series: 'all nodes', value: 8 }, { t: 2, series: 'a', value: 7 }], 'no sum for one node');
    assert.deepEqual(threads!.rows.map((r) => [r.series, r.value]), [['a · 0', 1], ['a · 1', 2], ['b · 0', 5]]);
    assert.deepEqual(tasks!.rows, [{ t: 1, series: 'ready', value: 6 }, { t: 1, series: 'done', value: 1 }]);
  });

  it('packs overlapping spans of a lane into sub-rows and ends an open span with its finished job', () => {
    const rows = views.spanRows([
      { id: 'x', at: 0, end: 10, lane: 'n1', job: 'j' },
      { id: 'y', at: 5, end: 8, lane: 'n1', job: 'j' },
      { id: 'z', at: 10, end: 12, lane: 'n1', job: 'j' },
      { id: 'o', at: 0, end: 20, open: true, lane: 'n2', job: 'j' },
      { id: 'r', at: 0, end: 20, open: true, lane: 'n3', job: 'k' },
    ], new Map([['j', { finishedAt: 50 }], ['k', { finishedAt: null }]]));
    const by = new Map(rows.map((r) => [r.id, r]));
    assert.deepEqual(['x', 'y', 'z'].map((id) => by.get(id)!.lane), ['n1', 'n1 ·2', 'n1']);
    assert.deepEqual([by.get('o')!.end, by.get('o')!.open], [50, false]);
    assert.deepEqual([by.get('r')!.end, by.get('r')!.open], [20, true], 'its job still runs');
  });

  it('tells spans, breakdowns and instants apart', () => {
    assert.equal(views.listShape([{ id: 'a', at: 1 }, { id: 'b', at: 1, end: 2 }]), 'spans');
    assert.equal(views.listShape([{ id: 'a', at: 1, values: { x: 1 } }]), 'breakdown');
    assert.equal(views.listShape([{ id: 'a', at: 1, label: 'shrink', values: { nodes: 2 } }]), 'instants');
  });
});
