/**
 * RUPER-LB's thread level on one node (seed 001 §2.1), driven from shared memory: a worker's report
 * is a read of its slot's progress word (`workers.progress(slot)`), taken when its own report
 * interval (Fig. 2) is due, so reporting costs no message and no thread waits for another. Every
 * Δt_pc a checkpoint (Fig. 3 left) turns measured speeds into how many iterations each running
 * task keeps, written to its slot's budget word (`workers.setBudget`); tasks put the rest in the
 * node's pool, where the threads that run out take it. A thread that runs out with nothing pooled
 * asks to finish (§2.1's two rules). When the local task wants to finish — a thread is let go, or a
 * checkpoint predicts less than t_min left — the process level is told (§2.2: its finish request).
 *
 * The same bookkeeping (which blocks each slot holds, iterations done, speeds) serves the process
 * level and the figures of every strategy; only `ruper` gives orders.
 */
import type { Workers } from '../../runtime/worker/worker-pool.js';
import { RuperTask, type RuperParams } from './balance/ruper-task.js';
import type { FromKind, FromTask } from './worker-messages.js';

interface SlotRange {
  /** Blocks the slot's task said it holds: [lo, hi). */
  lo: number;
  hi: number;
  /** Iterations the slot's task holds: [from, to), `from` as of `progressAt`. */
  from: number;
  to: number;
  progressAt: number;
}

export interface ThreadBalancerDeps {
  workers: Workers;
  params: RuperParams;
  /** Seconds, monotonic. */
  now(): number;
  blockSize: number;
  iterations: number;
  /** Whether to give orders (the `ruper` strategy) or only measure. */
  orders: boolean;
  /** The node's pool is empty (a thread that runs out then asks to finish). */
  poolEmpty(): boolean;
  /**
   * The local task wants to finish (with `orders` only): a thread's finish was granted or a checkpoint
   * predicts less than t_min left (§2.2's two reasons for a process's finish request), or, with
   * `idle`, every local thread has run out with nothing pooled.
   */
  onLocalEnd?(idle: boolean): void;
  /** Timers (tests replace them). */
  setTimer?(fn: () => void, ms: number): () => void;
}

const defaultTimer = (fn: () => void, ms: number) => {
  const h = setTimeout(fn, ms);
  h.unref?.();
  return () => clearTimeout(h);
};

export class ThreadBalancer {
  readonly task: RuperTask;
  private readonly base: number[];
  private readonly ranges: Array<SlotRange | undefined>;
  /** Blocks shed into this node's pool and not started yet (lo → hi, in blocks). */
  private readonly pooled = new Map<number, number>();
  private readonly nextReport: number[];
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  /** When each slot last ran out of work (s), for finish-time figures. */
  readonly idleSince: Array<number | undefined>;
  checkpoints = 0;
  ordersSent = 0;
  /** A checkpoint has shared the node's iterations by measured speed: the assignments mean something. */
  private assigned = false;

  constructor(private readonly d: ThreadBalancerDeps) {
    const size = d.workers.size;
    this.task = new RuperTask(0, d.params);
    const t = d.now();
    this.task.start(t, size);
    this.base = Array.from({ length: size }, (_, s) => d.workers.progress?.(s) ?? 0);
    this.ranges = Array.from({ length: size }, () => undefined);
    this.idleSince = Array.from({ length: size }, () => undefined);
    // The first report comes a tenth of Δt_pc after the start; Fig. 2 adapts it from then on.
    this.nextReport = Array.from({ length: size }, () => t + d.params.checkpointInterval / 10);
  }

  start(): void {
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
  }

  /** Iterations this node's threads did (their progress words since the job came here). */
  doneBy(slot: number): number {
    return (this.d.workers.progress?.(slot) ?? 0) - this.base[slot]!;
  }

  done(): number {
    let sum = 0;
    for (let s = 0; s < this.base.length; s++) sum += this.doneBy(s);
    return sum;
  }

  /** Iterations a slot's task still holds (estimated from its progress since it said where it was). */
  heldBy(slot: number): number {
    const r = this.ranges[slot];
    if (!r) return 0;
    return Math.max(0, r.to - Math.min(r.to, this.positionOf(slot)));
  }

  /** Iterations this node holds: what its tasks have left plus what it knows is pooled. */
  held(): number {
    let sum = 0;
    for (let s = 0; s < this.ranges.length; s++) sum += this.heldBy(s);
    for (const [lo, hi] of this.pooled) sum += this.iterationsOf(lo, hi);
    return sum;
  }

  /**
   * Iterations predicted done now (the process level's I_d^pred): the threads' predictions, but never
   * less than the progress words already show (exact, and fresher than the last reports).
   */
  predictedDone(t = this.d.now()): number {
    return Math.max(this.task.tally(t).predicted, this.done());
  }

  speeds(): number[] {
    return this.task.workers.map((w) => w.speed());
  }

  /** A task's message on the worker channel. */
  onTaskMessage(slot: number, m: FromTask): void {
    if (m.type === 'it-range') {
      const t = this.d.now();
      const current = this.ranges[slot];
      // The same task's range only shrinks; anything else is a task this slot just took.
      const taken = !current || m.lo < current.lo || m.hi > current.hi;
      const pooledHere = this.pooled.delete(m.lo);
      this.ranges[slot] = {
        lo: m.lo, hi: m.hi, from: m.lo * this.d.blockSize, to: Math.min(this.d.iterations, m.hi * this.d.blockSize), progressAt: this.d.workers.progress?.(slot) ?? 0,
      };
      this.idleSince[slot] = undefined;
      const w = this.task.workers[slot]!;
      const revived = !w.working();
      if (revived) {
        w.finished = false; // work came back to a thread that had finished (a transfer, a recovered task)
        this.nextReport[slot] = t + this.d.params.checkpointInterval / 10;
      }
      if (!taken || !this.d.orders || this.stopped) return;
      // Iterations that came from elsewhere (another node's transfer, a recovered task) change what the
      // node holds: share them now rather than at the next checkpoint.
      if (!pooledHere && this.assigned) this.checkpoint(t);
      this.holdToAssignment(slot, revived);
    } else if (m.type === 'it-shed' && m.to === undefined) {
      this.pooled.set(m.lo, m.hi);
    }
  }

  /**
   * A slot that takes a task runs what its assignment still allows (at least a block), not the whole
   * range: in RUPER-LB a worker does its I_n, wherever its iterations come from. The pool hands a task
   * to whichever thread is free first — often the slow one, whose share was cut — and near the end,
   * with less than t_min predicted, no checkpoint would take it back. A thread that had finished has
   * no assignment left to follow (it was let go); and while other threads of the node are idle, the
   * taken range is shared with them in proportion to speed (Fig. 3 left over what just came): the rest
   * goes back to the pool, where they take it.
   */
  private holdToAssignment(slot: number, revived: boolean): void {
    const w = this.task.workers[slot]!;
    const r = this.ranges[slot]!;
    if (!this.assigned || w.speed() <= 0) return;
    let keep = revived ? Infinity : Math.max(0, w.assigned - this.doneBy(slot));
    const idleSpeed = this.task.workers.reduce((sum, x, s) => sum + (s !== slot && !this.ranges[s] ? x.speed() : 0), 0);
    if (idleSpeed > 0) keep = Math.min(keep, (this.heldBy(slot) * w.speed()) / (w.speed() + idleSpeed));
    if (keep === Infinity) return;
    const end = Math.max(r.lo + 1, Math.ceil((this.positionOf(slot) + keep) / this.d.blockSize));
    if (end >= r.hi) return;
    this.ordersSent++;
    this.d.workers.setBudget?.(slot, end);
  }

  /** A slot finished its task: if nothing is pooled, this thread asks to finish (§2.1). */
  onSlotDone(slot: number, slotIdle: boolean): void {
    if (!slotIdle) return;
    this.ranges[slot] = undefined;
    const t = this.d.now();
    this.idleSince[slot] = t;
    if (this.stopped || !this.d.poolEmpty() || !this.d.orders) return;
    this.finishRequest(slot, t);
    if (this.ranges.every((r) => r === undefined)) this.d.onLocalEnd?.(true);
  }

  private finishRequest(slot: number, t: number): void {
    const w = this.task.workers[slot]!;
    if (!w.working()) return;
    let answer = this.task.requestFinish(slot, t);
    if (answer === 'report') {
      // Its last iterations, timed when they were done: a thread that ran out has not slowed down.
      const m = this.measure(slot, t);
      if (m && m.done !== w.done) this.task.report(slot, m.done, m.at);
      answer = this.task.requestFinish(slot, t);
    }
    // Still 'report': the others were told to shed its share and will at their next block.
    if (answer === 'checkpoint') this.checkpoint(t);
    else if (answer === 'granted') this.d.onLocalEnd?.(false);
  }

  /**
   * Fig. 3 left with I_n = what this node has done plus what it holds. Each running task's new
   * assignment goes into its slot's budget word in shared memory (no message): the block where the
   * iterations it keeps end. Between blocks the task cuts its range there; the surplus goes to the
   * pool for the threads that need it. The word is absolute, so reading it twice cuts once.
   */
  checkpoint(t = this.d.now()): void {
    this.checkpoints++;
    this.task.total = this.done() + this.held();
    const cp = this.task.checkPoint(t);
    // Everything is done: threads that ran out and were told to wait may finish now.
    if (cp.kind === 'force-finish') for (let s = 0; s < this.ranges.length; s++) if (!this.ranges[s]) this.task.requestFinish(s, t);
    if (!this.d.orders) return;
    if (cp.kind !== 'rebalanced') {
      if (cp.kind === 'force-finish' || cp.remainingTime <= this.d.params.minRemaining) this.d.onLocalEnd?.(false);
      return;
    }
    this.assigned = true;
    for (let s = 0; s < this.ranges.length; s++) {
      if (!this.ranges[s]) continue;
      const keep = Math.max(0, this.task.workers[s]!.assigned - this.doneBy(s));
      if (keep + this.d.blockSize > this.heldBy(s)) continue; // nothing worth a block to give
      this.ordersSent++;
      this.d.workers.setBudget?.(s, Math.ceil((this.positionOf(s) + keep) / this.d.blockSize));
    }
  }

  /**
   * What a slot's progress word says: iterations done here and when they last moved (s, on `now`'s
   * clock, never before the last report nor after `t`); undefined while a task is writing it.
   */
  private measure(slot: number, t: number): { done: number; at: number } | undefined {
    if (!this.d.workers.progressSample) return { done: this.doneBy(slot), at: t };
    const sample = this.d.workers.progressSample(slot);
    if (!sample) return undefined;
    const w = this.task.workers[slot]!;
    return { done: sample.units - this.base[slot]!, at: Math.min(t, Math.max(w.lastReport, sample.atMs / 1000)) };
  }

  /** The iteration a slot's task is at (estimated from its progress word since it said where it was). */
  private positionOf(slot: number): number {
    const r = this.ranges[slot]!;
    return r.from + ((this.d.workers.progress?.(slot) ?? 0) - r.progressAt);
  }

  /** Process level: send `iterations` to node `to`, taken from the tasks holding the most. */
  shed(iterations: number, to: string): void {
    const order = this.ranges.map((_, s) => s).filter((s) => this.ranges[s]).sort((a, b) => this.heldBy(b) - this.heldBy(a));
    let left = iterations;
    for (const s of order) {
      if (left < this.d.blockSize) break;
      const give = Math.min(left, Math.max(0, this.heldBy(s) - this.d.blockSize));
      if (give < this.d.blockSize) continue;
      this.post(s, { type: 'it-shed', iterations: give, to });
      left -= give;
    }
  }

  /** A process-level transfer names the node it goes to: a message, one per transfer (a budget word holds only a number). */
  private post(slot: number, body: FromKind): void {
    this.ordersSent++;
    this.d.workers.post?.(slot, body);
  }

  private iterationsOf(lo: number, hi: number): number {
    return Math.max(0, Math.min(this.d.iterations, hi * this.d.blockSize) - lo * this.d.blockSize);
  }

  /**
   * Reports that are due (a shared-memory read each), then the checkpoint if Δt_pc has passed.
   * A task adds its progress a chunk at a time, so a report is timed when the progress word last
   * moved, not when it was read, and taken only when it moved: a look between two chunks would
   * measure speed 0 (or a burst), shrink the interval (Fig. 2) towards more such looks, and have the
   * checkpoint take work from a busy thread. In the seed the worker reports right after iterations,
   * which is what this reproduces. A thread that shows nothing for a whole Δt_pc is measured at 0.
   */
  tick(t = this.d.now()): void {
    const { checkpointInterval } = this.d.params;
    for (let s = 0; s < this.nextReport.length; s++) {
      if (t < this.nextReport[s]! || !this.ranges[s]) continue;
      const w = this.task.workers[s]!;
      const m = this.measure(s, t);
      if (w.working() && (!m || (m.done === w.done && w.elapsed(t) < checkpointInterval))) {
        this.nextReport[s] = t + checkpointInterval / 10;
        continue;
      }
      const dt = this.task.report(s, m?.done ?? w.done, m && m.done !== w.done ? m.at : t);
      this.nextReport[s] = t + (dt > 0 ? dt : checkpointInterval);
    }
    if (t - this.task.lastCheckpoint >= checkpointInterval) this.checkpoint(t);
  }

  private arm(): void {
    if (this.stopped) return;
    const t = this.d.now();
    const next = Math.min(this.task.lastCheckpoint + this.d.params.checkpointInterval, ...this.nextReport.map((x, s) => (this.ranges[s] ? x : Infinity)));
    const ms = Math.max(1, Math.min(1000 * this.d.params.checkpointInterval, (next - t) * 1000));
    this.cancelTimer = (this.d.setTimer ?? defaultTimer)(() => {
      this.tick();
      this.arm();
    }, ms);
  }
}
