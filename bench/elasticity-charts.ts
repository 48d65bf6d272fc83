/**
 * The elasticity experiment's charts, drawn from bench/results/elasticity.json (so RESULTS.md
 * generation can redraw them without re-running the experiment): Fig. 7's S% bars and a Fig. 6-like
 * timeline of nodes and busy workers.
 */
import type { TimelinePoint } from '../src/dashboard/snapshot.js';
import { resultsSvg } from './machine.js';
import { writeSvg } from './plot.js';

export interface ElasticityResults {
  instance: string;
  k: number;
  t1: number;
  results: Array<Record<string, unknown> & { backend: string; add: number; phase2: number; speedupChangePercent: number }>;
  timeline?: { backend: string; add: number; phase2: number; timeline: TimelinePoint[] };
}

export async function writeElasticityCharts(r: ElasticityResults): Promise<void> {
  // Fig. 7's shape: S% per phase-2 duration, one bar per number of nodes in phase 2.
  await writeSvg(resultsSvg('elasticity-speedup'), {
    title: `S% (Eq. 1) on ${r.instance}: elastic vs static on ${r.k} node(s)`,
    data: { values: r.results.filter((x) => x.phase2 !== 0).map((x) => ({ ...x, nodes: `${r.k + (x.add as number)} nodes in phase 2` })) },
    facet: { column: { field: 'backend', type: 'nominal', title: null } },
    spec: {
      width: 220, height: 200, mark: 'bar',
      encoding: {
        x: { field: 'phase2', type: 'ordinal', title: 'phase 2 duration (s)' },
        xOffset: { field: 'nodes' },
        y: { field: 'speedupChangePercent', type: 'quantitative', title: 'S% (change in speedup)' },
        color: { field: 'nodes', type: 'nominal', title: null },
      },
    },
  });
  const timelineRun = r.timeline;
  if (timelineRun) {
    const t0 = timelineRun.timeline.find((p) => p.activeNodes > 0)?.t ?? timelineRun.timeline[0]!.t;
    const points = timelineRun.timeline.filter((p) => p.t >= t0);
    const series = points.flatMap((p) => [
      { t: (p.t - t0) / 1000, value: p.activeNodes, series: 'nodes in the job' },
      { t: (p.t - t0) / 1000, value: p.busyWorkers, series: 'busy workers' },
    ]);
    const t1 = r.t1;
    const t2 = r.t1 + timelineRun.phase2;
    await writeSvg(resultsSvg('elasticity-timeline'), {
      title: `Elastic run (${timelineRun.backend}): +${timelineRun.add} node(s) at t1 = ${t1} s, drained at t2 = ${t2} s`,
      vconcat: (['nodes in the job', 'busy workers'] as const).map((name) => ({
        width: 520, height: 110,
        layer: [
          {
            data: { values: series.filter((p) => p.series === name) },
            mark: { type: 'line' as const, interpolate: 'step-after' as const, strokeWidth: 2, color: name === 'nodes in the job' ? '#1f77b4' : '#d62728' },
            encoding: {
              x: { field: 't', type: 'quantitative' as const, title: 'seconds since the job started' },
              y: { field: 'value', type: 'quantitative' as const, title: name, axis: { tickMinStep: 1 } },
            },
          },
          {
            data: { values: [{ t: t1, label: 't1' }, { t: t2, label: 't2' }] },
            layer: [
              { mark: { type: 'rule' as const, strokeDash: [2, 2], color: 'gray' }, encoding: { x: { field: 't', type: 'quantitative' as const } } },
              { mark: { type: 'text' as const, align: 'left' as const, dx: 4, y: 8, color: 'gray' }, encoding: { x: { field: 't', type: 'quantitative' as const }, text: { field: 'label' } } },
            ],
          },
        ],
      })),
    });
  }
}
