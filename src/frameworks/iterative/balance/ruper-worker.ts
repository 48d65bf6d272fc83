/**
 * RUPER-LB's worker object (seed 001 Table 1, Fig. 2 right) and its guess worker (Fig. 3 right).
 * A worker is one thread's share of a task; a guess worker stands for a whole process at rank 0.
 * Pure state: every method takes its timestamp (seconds) from the caller, so the balancer runs
 * under simulated time in tests and under the node's clock in the job kind.
 */

/** One speed measure: time since the worker started (Δt_m) and the speed measured (iterations / s). */
export interface SpeedMeasure {
  at: number;
  speed: number;
}

export class RuperWorker {
  /** Assigned iterations (I_n). */
  assigned = 0;
  started = false;
  finished = false;
  /** Iterations registered as done (I_d). */
  done = 0;
  /** Timestamp of the last report (t_r). */
  lastReport = 0;
  /** Timestamp of the worker's start (t_i). */
  startedAt = 0;
  /** Speed measures (m), oldest first. */
  readonly measures: SpeedMeasure[] = [];

  start(t: number, assigned: number): void {
    this.started = true;
    this.finished = false;
    this.startedAt = t;
    this.lastReport = t;
    this.assigned = assigned;
  }

  working(): boolean {
    return this.started && !this.finished;
  }

  /** Time since the last report. */
  elapsed(t: number): number {
    return t - this.lastReport;
  }

  /** The last measured speed (0 before the first measure). */
  speed(): number {
    return this.measures.length === 0 ? 0 : this.measures[this.measures.length - 1]!.speed;
  }

  /** Iterations predicted done at t if the speed has not changed since the last report (never past the assignment). */
  predDone(t: number): number {
    return Math.min(this.assigned, this.done + this.speed() * (t - this.lastReport));
  }

  /**
   * Fig. 2 right: registers the speed since the last report and returns s / s_l, the deviation from
   * the previous speed. With no previous speed the deviation is infinite (or 1 if nothing moved), a
   * case the seed leaves to its omitted sanity checks.
   */
  addMeasure(t: number, doneNow: number): number {
    const dt = t - this.lastReport;
    const sinceStart = t - this.startedAt;
    const previous = this.speed();
    const s = dt > 0 ? (doneNow - this.done) / dt : 0;
    this.done = doneNow;
    this.lastReport = t;
    this.measures.push({ at: sinceStart, speed: s });
    return deviation(s, previous);
  }
}

function deviation(s: number, previous: number): number {
  if (previous > 0) return s / previous;
  return s === 0 ? 1 : Infinity;
}

/**
 * Fig. 3 right: a process as rank 0 sees it. Reports carry *predicted* iterations done, so the
 * speed is corrected by how far the report is from what this guess worker expected; with no speed
 * yet it measures like a plain worker.
 */
export class GuessWorker extends RuperWorker {
  override addMeasure(t: number, doneNow: number): number {
    const previous = this.speed();
    // The seed's pseudocode passes I_n here; measuring the reported iterations is what it means.
    if (previous === 0) return super.addMeasure(t, doneNow);
    const dt = t - this.lastReport;
    const sinceStart = t - this.startedAt;
    let dev: number;
    if (this.done > doneNow) {
      // The process predicted more than it now reports: compare the mean speeds since the start.
      const before = this.done / (this.lastReport - this.startedAt);
      const now = doneNow / (t - this.startedAt);
      dev = now / before;
    } else {
      const expected = previous * dt;
      dev = expected > 0 ? (doneNow - this.done) / expected : 1;
    }
    // The seed does not write I_d here; without it the next ΔI_r would count this report's iterations again.
    this.done = doneNow;
    this.lastReport = t;
    this.measures.push({ at: sinceStart, speed: dev * previous });
    return dev;
  }
}
