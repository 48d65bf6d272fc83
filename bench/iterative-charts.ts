/**
 * bench/iterative's charts (seed 001): speed over time per strategy beside the neighbour, of each
 * process and of each thread of the 2-thread process (Fig. 9); finish time of every process (Fig. 6–7
 * left) and of every thread of the 2-thread process (Fig. 7 right, Fig. 8); the processes' finish gap
 * against the job's size (Fig. 7 left).
 */
import { resultsSvg } from './machine.js';
import { writeSvg } from './plot.js';

export interface ThreadResult {
  process: string;
  thread: number;
  done: number;
  finish: number;
  rate: number;
  /** Still working at the last sample of the figures (its finish is the job's end). */
  busyAtEnd: boolean;
  /** Its last measured speed (iterations / s). */
  speed: number;
}

/** What the runs ran beside: the varying stress-ng, nothing, or (B) a CPU quota of half a core. */
export type Condition = 'neighbour' | 'quiet' | 'half-core';

export interface IterativeRun {
  balance: string;
  condition: Condition;
  /** The repetition it belongs to (0-based): strategies are compared within one. */
  rep: number;
  noise: boolean;
  makespan: number;
  /**
   * The ideal makespan from the speeds the same repetition's `static` run measured under the same
   * condition (each of its threads works its fixed share to its end there): iterations ÷ the sum of
   * those threads' speeds. Set once the repetition's runs are in.
   */
  ideal: number;
  /** makespan ÷ ideal. */
  overIdeal: number;
  /** Last minus first thread finish (s), each finish as sampled: see `resolution`. */
  spread: number;
  /**
   * The sampling resolution of the finish times (s): the longest gap between two samples of the
   * figures, or between the last one and the job's end (a thread still busy at the last sample is taken
   * to finish at the end).
   */
  resolution: number;
  iterations: number;
  processes: Array<{ node: string; done: number; finish: number }>;
  threads: ThreadResult[];
  /** Speed of each process, and of each thread of a process with several, over time. */
  timeline: Array<{ t: number; series: string; speed: number; done: number }>;
  hogPhases: Array<{ at: number; stressors: number; load: number }>;
  /** Cores each node process (A, B) used during the run: its CPU seconds ÷ the makespan. */
  cpuCores: Record<string, number>;
}


/** Writes the charts as bench/results/NAME-sweep.svg, NAME-speed.svg and NAME-finish.svg. */
export async function writeIterativeCharts(name: string, r: { runs: IterativeRun[]; oneProcessRuns: IterativeRun[]; halfCore: { runs?: IterativeRun[] }; sweepRuns: IterativeRun[]; iterations: number }): Promise<void> {
  if (r.sweepRuns.length > 0) {
    // Fig. 7 left: the processes' finish gap relative to the makespan, as the job grows at a fixed Δt_pc.
    const gap = (x: IterativeRun) => Math.max(...x.processes.map((p) => p.finish)) - Math.min(...x.processes.map((p) => p.finish));
    await writeSvg(resultsSvg(`${name}-sweep`), {
      title: 'Gap between the processes\' finish times ÷ makespan, by job size (every repetition)',
      data: { values: r.sweepRuns.map((x) => ({ histories: x.iterations, balance: x.balance, gap: gap(x) / x.makespan })) },
      mark: { type: 'point', filled: true, size: 70, opacity: 0.8 },
      encoding: {
        x: { field: 'histories', type: 'quantitative', scale: { type: 'log' }, title: 'slab histories' },
        y: { field: 'gap', type: 'quantitative', title: 'finish gap ÷ makespan' },
        color: { field: 'balance', type: 'nominal', title: null },
      },
      width: 420, height: 200,
    });
  }
  // Beside the neighbour, and (the half-core rows) with B at a CPU quota of half a core.
  const experiments = [['two processes', r.runs], ['one process × 2 threads', r.oneProcessRuns], ['two processes, B at half a core', r.halfCore.runs ?? []]] as const;
  const shown = (x: IterativeRun) => x.noise || x.condition === 'half-core';
  await writeSvg(resultsSvg(`${name}-speed`), {
    title: `Speed over time beside stress-ng or (B) at half a core, ${r.iterations} slab histories (first repetition)`,
    data: { values: experiments.flatMap(([experiment, runs]) => runs.filter(shown).filter((x, k, all) => all.findIndex((y) => y.balance === x.balance) === k).flatMap((x) => x.timeline.filter((p) => experiment !== 'one process × 2 threads' || p.series.includes('thread')).map((p) => ({ ...p, balance: x.balance, experiment })))) },
    facet: { row: { field: 'experiment', type: 'nominal', title: null }, column: { field: 'balance', type: 'nominal', title: null } },
    spec: {
      width: 220, height: 160, mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x: { field: 't', type: 'quantitative', title: 'time (s)' },
        y: { field: 'speed', type: 'quantitative', title: 'histories / s' },
        color: { field: 'series', type: 'nominal', title: null },
      },
    },
  });
  await writeSvg(resultsSvg(`${name}-finish`), {
    title: 'Finish time of every process (A, B) and of every thread of the 2-thread process (C) beside stress-ng or at half a core, every repetition',
    data: { values: experiments.flatMap(([experiment, runs]) => runs.filter(shown).flatMap((x) => x.threads.map((t) => ({ experiment, balance: x.balance, who: experiment !== 'one process × 2 threads' ? `process ${t.process}` : `${t.process} thread ${t.thread}`, finish: t.finish })))) },
    facet: { row: { field: 'experiment', type: 'nominal', title: null } },
    resolve: { scale: { x: 'independent' } },
    spec: {
      mark: { type: 'point', filled: true, size: 70, opacity: 0.8 },
      encoding: {
        y: { field: 'balance', type: 'nominal', title: null },
        x: { field: 'finish', type: 'quantitative', title: 'finish time (s)' },
        color: { field: 'who', type: 'nominal', title: null },
      },
      width: 420, height: 110,
    },
  });
}
