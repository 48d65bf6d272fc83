/**
 * RUPER-LB's task object (seed 001 Table 1, Fig. 2 left, Fig. 3 left, §2.1): the iterations of one
 * process shared among its workers. Workers report (iterations done, timestamp) whenever they like;
 * the report answers the time until the worker's next report, adapted to how much its speed moved.
 * A checkpoint redistributes what is left in proportion to measured speed; finish requests are
 * granted or refused by the two rules of §2.1. Pure: time comes in as arguments (seconds).
 */
import { RuperWorker } from './ruper-worker.js';

export interface RuperParams {
  /** Time between checkpoints, Δt_pc (s); also the cap on a report interval. */
  checkpointInterval: number;
  /** Below this predicted remaining time (s) the assignment is left alone, t_min. */
  minRemaining: number;
  /** Largest speed deviation that leaves the report interval alone, ds_max. */
  maxDeviation: number;
}

export const DEFAULT_RUPER: RuperParams = { checkpointInterval: 1, minRemaining: 0.25, maxDeviation: 0.1 };

export type CheckpointResult =
  | { kind: 'force-finish' }
  | { kind: 'rebalanced'; remainingTime: number }
  | { kind: 'kept'; remainingTime: number };

/** §2.1: a finish request is granted, or refused because a report or a checkpoint is needed first. */
export type FinishAnswer = 'granted' | 'report' | 'checkpoint';

export class RuperTask<W extends RuperWorker = RuperWorker> {
  /** Iterations to do (I_n). */
  total: number;
  readonly workers: W[] = [];
  /** Start timestamp (t_0) and last checkpoint timestamp (t_pc). */
  startedAt = 0;
  lastCheckpoint = 0;
  started = false;
  finished = false;

  constructor(total: number, readonly params: RuperParams = DEFAULT_RUPER, private readonly make: () => W = () => new RuperWorker() as W) {
    this.total = total;
  }

  /** Starts the task with `count` workers sharing the iterations equally (the preliminary assignment). */
  start(t: number, count: number): void {
    this.started = true;
    this.startedAt = t;
    this.lastCheckpoint = t;
    const shares = apportion(this.total, Array.from({ length: count }, () => 1));
    for (let i = 0; i < count; i++) this.addWorker(t, shares[i]!);
  }

  /** A worker joins (a thread or a process): it starts with `assigned` iterations (0 until the next checkpoint). */
  addWorker(t: number, assigned = 0): number {
    const w = this.make();
    w.start(t, assigned);
    this.workers.push(w);
    return this.workers.length - 1;
  }

  /**
   * Fig. 2 left: registers worker i's report and returns the suggested time until its next one,
   * or -1 if the worker no longer works on the task.
   */
  report(i: number, doneNow: number, t: number): number {
    const w = this.workers[i]!;
    if (!w.working()) return -1;
    const { maxDeviation: ds, checkpointInterval } = this.params;
    let dt = w.elapsed(t);
    const dev = Math.abs(w.addMeasure(t, doneNow) - 1);
    if (dev > ds) dt *= Math.max(1 - (dev - ds), 0.8);
    else if (dev < 0.1 * ds) dt *= Math.min(1 + (0.5 * ds - dev), 1.2);
    if (dt > checkpointInterval) dt = checkpointInterval * 0.8;
    return dt;
  }

  /** Speed of the working workers (s_t), iterations registered (I_t) and predicted (I_pred) at t. */
  tally(t: number): { speed: number; done: number; predicted: number } {
    let speed = 0;
    let done = 0;
    let predicted = 0;
    for (const w of this.workers) {
      done += w.done;
      if (w.working()) {
        speed += w.speed();
        predicted += w.predDone(t);
      } else {
        predicted += w.done;
      }
    }
    return { speed, done, predicted };
  }

  /** Predicted time (s) until every iteration is done, from the speeds measured (Infinity with none). */
  remainingTime(t: number): number {
    const { speed, predicted } = this.tally(t);
    return speed > 0 ? Math.max(0, this.total - predicted) / speed : Infinity;
  }

  /**
   * Fig. 3 left: if everything is done, every working worker's assignment becomes what it did; else,
   * while the predicted remaining time exceeds t_min, what is left is shared among the working
   * workers in proportion to their measured speed (whole iterations, largest remainders first).
   */
  checkPoint(t: number): CheckpointResult {
    this.lastCheckpoint = t;
    const { speed, done } = this.tally(t);
    if (this.total <= done) {
      for (const w of this.workers) if (w.working()) w.assigned = w.done;
      return { kind: 'force-finish' };
    }
    const remainingTime = this.remainingTime(t);
    if (!(remainingTime > this.params.minRemaining) || speed <= 0) return { kind: 'kept', remainingTime };
    const working = this.workers.filter((w) => w.working());
    const shares = apportion(this.total - done, working.map((w) => w.speed() / speed));
    working.forEach((w, k) => (w.assigned = w.done + shares[k]!));
    return { kind: 'rebalanced', remainingTime };
  }

  /** §2.1's two refusals: fewer iterations registered than assigned, or more than t_min predicted left. */
  requestFinish(i: number, t: number): FinishAnswer {
    const w = this.workers[i]!;
    if (!w.working()) return 'granted';
    if (w.done < w.assigned) return 'report';
    if (this.remainingTime(t) > this.params.minRemaining) return 'checkpoint';
    w.finished = true;
    if (this.workers.every((x) => !x.working())) this.finished = true;
    return 'granted';
  }
}

/**
 * Splits `amount` whole units in proportion to `weights` so that the parts add up exactly
 * (largest remainders first, ties to the lower index).
 */
export function apportion(amount: number, weights: readonly number[]): number[] {
  if (weights.length === 0) return [];
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (sum > 0 ? (amount * w) / sum : amount / weights.length));
  const parts = exact.map(Math.floor);
  let left = amount - parts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) parts[order[k]![1]]!++;
  return parts;
}
