/**
 * RUPER-LB across processes (seed 001 §2.2, Fig. 4). Rank 0's monitor keeps one guess worker per
 * process, asks each for a report on its own schedule, and answers three instructions: 0 start
 * (a preliminary equal share of what is left), 1 report and 2 finish request (both go through
 * receiveReport: the guess worker's measure, then a checkpoint over all processes; the balance ends
 * once the predicted remaining time is below t_min, and, beyond the seed, reopens if a later report
 * predicts more than t_min again). The other ranks' side is
 * `ProcessMonitorMember`. Pure state machines: time and elapsed time come in as arguments, the
 * messages to send come out as return values.
 */
import { GuessWorker } from './ruper-worker.js';
import { RuperTask, type RuperParams } from './ruper-task.js';

export interface Assignment {
  /** Iterations the process is assigned in total (I_n of its guess worker). */
  assigned: number;
  /** finished^MPI: the assignment will not change unless a later report predicts more than t_min left. */
  finished: boolean;
}

interface Schedule {
  /** Δt^report: time between this process's reports. */
  every: number;
  /** Δt^next: time until its next report request (0: requested, waiting for it). */
  next: number;
  /** Time since the request we are waiting for went out. */
  waiting: number;
}

export class ProcessMonitor {
  readonly task: RuperTask<GuessWorker>;
  /** Guess worker index per process. */
  private readonly index = new Map<string, number>();
  private readonly schedule = new Map<string, Schedule>();
  /** finished^MPI. */
  finished = false;
  /** Processes told that the balance finished. */
  private readonly told = new Set<string>();

  constructor(total: number, readonly params: RuperParams) {
    this.task = new RuperTask<GuessWorker>(total, params, () => new GuessWorker());
  }

  processes(): string[] {
    return [...this.index.keys()];
  }

  worker(node: string): GuessWorker | undefined {
    const i = this.index.get(node);
    return i === undefined ? undefined : this.task.workers[i];
  }

  /** done^MPI(): iterations predicted done by all processes at t. */
  predictedDone(t: number): number {
    return this.task.tally(t).predicted;
  }

  /**
   * The top of Fig. 4's loop: `elapsed` seconds passed since the last call. Returns the processes whose
   * report is due now and the timeout until the next one is due (the smallest Δt^next).
   *
   * Beyond the seed (MPI does not lose messages; a node's transport can, when the member has not
   * joined the job yet or is leaving): a request unanswered for Δt_pc is sent again, else the process
   * would never be asked again.
   */
  advance(elapsed: number): { requestReports: string[]; timeout: number } {
    const requestReports: string[] = [];
    let timeout = Infinity;
    const resend = this.params.checkpointInterval;
    for (const [node, s] of this.schedule) {
      if (s.next <= 0) {
        s.waiting += elapsed;
        if (s.waiting >= resend) {
          requestReports.push(node);
          s.waiting = 0;
        }
        timeout = Math.min(timeout, resend - s.waiting);
        continue;
      }
      if (s.next <= elapsed) {
        requestReports.push(node);
        s.next = 0;
        s.waiting = 0;
        timeout = Math.min(timeout, resend);
      } else {
        s.next -= elapsed;
        timeout = Math.min(timeout, s.next);
      }
    }
    return { requestReports, timeout };
  }

  /** Instruction 0: a process starts and gets I_rem / processes as its preliminary assignment. */
  start(node: string, t: number): Assignment {
    if (!this.task.started) {
      this.task.started = true;
      this.task.startedAt = t;
      this.task.lastCheckpoint = t;
    }
    let i = this.index.get(node);
    const remaining = this.task.total - this.predictedDone(t);
    const share = Math.floor(remaining / (this.index.size + (i === undefined ? 1 : 0)));
    if (i === undefined) {
      const measured = this.task.workers.filter((w) => w.working() && w.speed() > 0);
      i = this.task.addWorker(t, share);
      this.index.set(node, i);
      // Beyond the seed: a process joining a running job holds nothing yet, so it could never show a
      // speed; it is credited with the mean speed of the measured ones until its first report.
      if (measured.length > 0) this.task.workers[i]!.measures.push({ at: 0, speed: measured.reduce((a, w) => a + w.speed(), 0) / measured.length });
    } else {
      this.task.workers[i]!.assigned = this.task.workers[i]!.done + share;
    }
    this.schedule.set(node, { every: this.params.checkpointInterval, next: this.params.checkpointInterval, waiting: 0 });
    return this.answer(node);
  }

  /**
   * Instructions 1 and 2 (receiveReport): the guess worker registers the predicted iterations done,
   * the report interval adapts as in Fig. 2, and the processes' assignments are rebalanced unless the
   * balance has finished. Returns the assignment to send back.
   */
  receiveReport(node: string, t: number, predictedDone: number, idle = false): Assignment {
    const i = this.index.get(node);
    if (i === undefined) throw new Error(`monitor: a report from ${node}, which never started`);
    let every = this.schedule.get(node)!.every;
    const w = this.task.workers[i]!;
    // A report right after the previous one (a finish request's round) measures mostly noise: a
    // prediction that moved by a block in a few milliseconds is no speed, and a wild one could end the
    // balance (t_res < t_min).
    const tooSoon = w.speed() > 0 && t - w.lastReport < 0.2 * this.params.checkpointInterval;
    if (idle || tooSoon) {
      // Beyond the seed: a process that holds nothing cannot show its speed (a plain measure would be 0
      // and its share 0 for ever): register what it did, keep its last speed.
      w.done = predictedDone;
      w.lastReport = t;
    } else {
      every = this.task.report(i, predictedDone, t);
    }
    // The seed freezes the assignments for good once t_res < t_min. Predictions are only predictions:
    // on a machine whose load changes (other tenants, a stalled process) a process can fall far behind
    // what was predicted after that, and a frozen balance lets the others run dry while it works on
    // alone. So every report runs the checkpoint (which leaves the assignments alone below t_min) and
    // the balance reopens when the remaining time, measured afresh, exceeds t_min again.
    const cp = this.task.checkPoint(t);
    const finished = cp.kind === 'force-finish' || cp.remainingTime <= this.params.minRemaining;
    if (this.finished && !finished) this.told.clear();
    this.finished = finished;
    const s = this.schedule.get(node)!;
    s.every = every > 0 ? every : this.params.checkpointInterval;
    s.next = s.every;
    return this.answer(node);
  }

  /** A process left (drained or crashed): its guess worker stops counting; what it held is reassigned. */
  remove(node: string): void {
    const i = this.index.get(node);
    if (i === undefined) return;
    this.task.workers[i]!.finished = true;
    this.schedule.delete(node);
    this.index.delete(node);
  }

  /** allFinished(): every live process was told that the balance finished. */
  allFinished(): boolean {
    return this.finished && [...this.index.keys()].every((n) => this.told.has(n));
  }

  private answer(node: string): Assignment {
    if (this.finished) this.told.add(node);
    return { assigned: this.worker(node)!.assigned, finished: this.finished };
  }
}

export type MemberSend = { instruction: 0 } | { instruction: 1 | 2; t: number; predictedDone: number };

/**
 * Fig. 4 right, a process other than rank 0: sends a start petition (instruction 0) until rank 0
 * answers it, answers report requests (1) with its predicted iterations done, and asks to finish (2)
 * when its local task wants to — a thread would be let go, or a local checkpoint predicts less than
 * t_min left (§2.2) — one request at a time, while the balance is on.
 *
 * Beyond the seed: the balance's end is not final (rank 0 reopens it when a later report predicts more
 * than t_min left), so a process whose threads have all run out asks once more after the end
 * (`idle`): rank 0 then asks the others for reports, and gives it a share if they are behind.
 */
export class ProcessMonitorMember {
  assigned = 0;
  /** An answer to the start petition arrived (from the current rank 0). */
  started = false;
  finished = false;
  /** finish^MPI_req and finish^MPI_sent. */
  finishRequested = false;
  finishSent = false;

  /** The start petition, while rank 0 has not answered one (sent again on each of its announcements). */
  begin(): MemberSend | undefined {
    return this.started ? undefined : { instruction: 0 };
  }

  /** Another rank 0 took over (the job's leader changed): start again with it. */
  restart(): void {
    this.started = false;
    this.finished = false;
    this.finishSent = false;
  }

  /** Rank 0 asked for a report (1) or answers our finish request (2): send the prediction at t. */
  onRequest(instruction: 1 | 2, t: number, predictedDone: number): MemberSend {
    return { instruction, t, predictedDone };
  }

  /** The answer to a start, report or finish request. */
  onAssignment(instruction: 0 | 1 | 2, a: Assignment): void {
    this.started = true;
    this.assigned = a.assigned;
    this.finished = a.finished;
    if (instruction === 2) this.finishSent = false;
  }

  /** A finish request that never reached rank 0 (the send failed): another may be sent. */
  lost(): void {
    this.finishSent = false;
  }

  /**
   * The local task wants to finish: returns the finish request to send, if one is not already on its
   * way and the balance is on (or, beyond the seed, every local thread has run out: `idle`).
   */
  requestFinish(t: number, predictedDone: number, idle = false): MemberSend | undefined {
    this.finishRequested = true;
    if (!this.started || this.finishSent || (this.finished && !idle)) return undefined;
    this.finishRequested = false;
    this.finishSent = true;
    return { instruction: 2, t, predictedDone };
  }
}
