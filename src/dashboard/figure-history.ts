import type { FigureSample, JobFigureHistory } from './snapshot.js';

export interface FigureHistoryLimits {
  /** Samples kept per job (the newest; default 600: ten minutes at one tick a second). */
  points?: number;
  /** Jobs kept (default 16): when more have figures, the one sampled longest ago goes. */
  jobs?: number;
  /** Figure values kept in all (default 250 000, a few MB): beyond, the oldest samples of the largest history go. */
  values?: number;
}

/**
 * Every job's kind figures over time, sampled once per monitor tick from what the job's nodes
 * published: a bounded ring per job and a bounded number of jobs, so memory stays fixed however
 * long the coordinator runs. Costs no coordination operation of its own (the figures come with the
 * node stats the monitor reads anyway).
 */
export class FigureHistory {
  private readonly jobs = new Map<string, JobFigureHistory>();
  /** Figure values held per job, and in all. */
  private readonly sizes = new Map<string, number>();
  private total = 0;
  private readonly points: number;
  private readonly maxJobs: number;
  private readonly maxValues: number;

  constructor(limits: FigureHistoryLimits = {}) {
    this.points = limits.points ?? 600;
    this.maxJobs = limits.jobs ?? 16;
    this.maxValues = limits.values ?? 250_000;
  }

  /** Adds one tick: `nodes` are the nodes in a job, with their job's kind and figures. */
  add(t: number, nodes: { id: string; job: string | null; kind: string | null; figures: Record<string, number> }[]): void {
    const samples = new Map<string, { kind: string; sample: FigureSample }>();
    for (const n of nodes) {
      if (!n.job || !n.kind || Object.keys(n.figures).length === 0) continue;
      let entry = samples.get(n.job);
      if (!entry) samples.set(n.job, (entry = { kind: n.kind, sample: { t, nodes: {} } }));
      entry.sample.nodes[n.id] = n.figures;
    }
    for (const [job, { kind, sample }] of samples) {
      let history = this.jobs.get(job);
      if (!history) history = { job, kind, samples: [] };
      this.jobs.delete(job); // re-inserted last: the map's order is the order of last samples
      this.jobs.set(job, history);
      history.samples.push(sample);
      this.grow(job, sizeOf(sample));
      while (history.samples.length > this.points) this.dropOldest(history);
    }
    while (this.jobs.size > this.maxJobs) this.forget(this.jobs.keys().next().value!);
    while (this.total > this.maxValues) {
      const [largest] = [...this.sizes].reduce((a, b) => (b[1] > a[1] ? b : a));
      const history = this.jobs.get(largest)!;
      if (history.samples.length > 1) this.dropOldest(history);
      else this.forget(largest);
    }
  }

  private grow(job: string, by: number): void {
    this.sizes.set(job, (this.sizes.get(job) ?? 0) + by);
    this.total += by;
  }

  private dropOldest(history: JobFigureHistory): void {
    this.grow(history.job, -sizeOf(history.samples.shift()!));
  }

  private forget(job: string): void {
    this.total -= this.sizes.get(job) ?? 0;
    this.sizes.delete(job);
    this.jobs.delete(job);
  }

  /** Figure values held in all (for tests of the bound). */
  get values(): number {
    return this.total;
  }

  /** Copies of every job's history, the job sampled most recently last. */
  all(): JobFigureHistory[] {
    return [...this.jobs.values()].map((h) => ({ ...h, samples: [...h.samples] }));
  }
}

function sizeOf(sample: FigureSample): number {
  let n = 0;
  for (const figures of Object.values(sample.nodes)) n += Object.keys(figures).length;
  return n;
}
