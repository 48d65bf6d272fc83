/** bench/iterative's charts: each process's speed over time per strategy under noise (seed 001 Fig. 9) and finish times (Fig. 6–7). */
import { resultsFile } from './machine.js';
import { writeSvg } from './plot.js';

export interface IterativeRun {
  balance: string;
  noise: boolean;
  makespan: number;
  ideal: number;
  overIdeal: number;
  spread: number;
  iterations: number;
  processes: Array<{ node: string; done: number; finish: number; threads: number[]; rate: number }>;
  timeline: Array<{ t: number; node: string; speed: number; done: number }>;
  hogPhases: Array<{ at: number; load: number }>;
}

const svg = (name: string) => new URL(resultsFile(name).href.replace(/\.json$/, '.svg'));

export async function writeIterativeCharts(r: { runs: IterativeRun[]; iterations: number }): Promise<void> {
  const noisy = r.runs.filter((x) => x.noise);
  await writeSvg(svg('iterative-speed'), {
    title: `Speed of each process over time, ${r.iterations} slab histories, B beside stress-ng`,
    data: { values: noisy.flatMap((x) => x.timeline.map((p) => ({ ...p, balance: x.balance }))) },
    facet: { column: { field: 'balance', type: 'nominal', title: null } },
    spec: {
      width: 220, height: 180, mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x: { field: 't', type: 'quantitative', title: 'time (s)' },
        y: { field: 'speed', type: 'quantitative', title: 'histories / s' },
        color: { field: 'node', type: 'nominal', title: null },
      },
    },
  });
  await writeSvg(svg('iterative-finish'), {
    title: 'Finish time of every thread of each process (B beside stress-ng)',
    data: { values: noisy.flatMap((x) => x.processes.flatMap((p) => p.threads.map((t, i) => ({ balance: x.balance, node: p.node, thread: i, finish: t })))) },
    mark: { type: 'point', filled: true, size: 80 },
    encoding: {
      y: { field: 'balance', type: 'nominal', title: null },
      x: { field: 'finish', type: 'quantitative', title: 'finish time (s)' },
      color: { field: 'node', type: 'nominal', title: null },
    },
    width: 420, height: 120,
  });
}
