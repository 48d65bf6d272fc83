/**
 * RUPER-LB's process level on the job's leader (seed 001 §2.2, Fig. 4 left): a member node petitions
 * to start (instruction 0) and gets a preliminary share; the monitor then asks each started node for a
 * report on that node's own schedule (1), registers its predicted iterations done in the node's guess
 * worker, and answers with the node's assignment; a node's finish request (2) is answered the same way.
 * Once every node has been told that the balance finished (allFinished), no more reports are asked
 * for, as in Fig. 4, until a finish request reopens it. Beyond the seed, the answer says where the
 * node's surplus goes: iterations move between nodes as block ranges placed on the node that is short
 * (through the ledger, so exactly once), and nodes that join get a share at the next answer, nodes that
 * leave stop counting. The leader's own node is served by direct calls.
 */
import { ProcessMonitor, type Assignment } from './balance/monitor.js';
import type { RuperParams } from './balance/ruper-task.js';

export interface Transfer {
  to: string;
  iterations: number;
}

export interface ProcessReport {
  predictedDone: number;
  held: number;
}

/** The instruction an answer responds to: 0 start, 1 report, 2 finish request (Fig. 4). */
export type Instruction = 0 | 1 | 2;

export interface ProcessBalancerDeps {
  nodeId: string;
  iterations: number;
  blockSize: number;
  params: RuperParams;
  now(): number;
  members(): string[];
  /** Tells a member that has not petitioned to start where the leader is (it answers with instruction 0). */
  invite(node: string): void;
  /** Asks a node for its report (instruction 1); the answer comes back through `onReport`. */
  requestReport(node: string): void;
  /** Sends a node its assignment and transfers, answering `instruction`. */
  answer(node: string, instruction: Instruction, a: Assignment, transfers: Transfer[]): void;
  setTimer?(fn: () => void, ms: number): () => void;
}

export class ProcessBalancer {
  readonly monitor: ProcessMonitor;
  private readonly held = new Map<string, number>();
  /** Iterations ordered to each node since its last report (on their way). */
  private readonly incoming = new Map<string, number>();
  private lastTick: number;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  transfers = 0;

  constructor(private readonly d: ProcessBalancerDeps) {
    this.monitor = new ProcessMonitor(d.iterations, d.params);
    this.lastTick = d.now();
  }

  start(): void {
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
  }

  /** Members that have not started are told where the leader is; members that left stop counting. */
  private syncMembers(): void {
    const live = new Set(this.d.members());
    for (const node of live) if (!this.monitor.worker(node)) this.d.invite(node);
    for (const node of this.monitor.processes()) {
      if (live.has(node)) continue;
      this.monitor.remove(node);
      this.held.delete(node);
      this.incoming.delete(node);
    }
  }

  /**
   * Fig. 4 left's loop body: due report requests, then sleep until the next one is due. Once every
   * node was told that the balance finished the loop asks for nothing (Fig. 4 exits); it keeps only
   * following membership, every Δt_pc, until a finish request reopens the balance.
   */
  tick(): void {
    if (this.stopped) return;
    const t = this.d.now();
    this.syncMembers();
    let timeout = this.d.params.checkpointInterval;
    if (!this.monitor.allFinished()) {
      const due = this.monitor.advance(t - this.lastTick);
      for (const node of due.requestReports) this.d.requestReport(node);
      timeout = Math.min(timeout, due.timeout);
    }
    this.lastTick = t;
    const ms = Math.max(5, timeout * 1000);
    this.cancelTimer = (this.d.setTimer ?? ((fn, x) => {
      const h = setTimeout(fn, x);
      h.unref?.();
      return () => clearTimeout(h);
    }))(() => this.tick(), ms);
  }

  /** Instruction 0: a node petitions to start and gets its preliminary share (again, if it asks again). */
  onStart(node: string): void {
    if (this.stopped) return;
    this.d.answer(node, 0, this.monitor.start(node, this.d.now()), []);
  }

  /**
   * Instructions 1 and 2: a node's report, or its finish request, which is answered like a report and,
   * beyond the seed, asks every other node for a fresh report: a node about to run out is the moment to
   * know whether the others are behind (and to reopen the balance if they are).
   */
  onReport(node: string, report: ProcessReport, finishRequest: boolean): void {
    if (this.stopped) return;
    const t = this.d.now();
    if (!this.monitor.worker(node)) this.monitor.start(node, t);
    const a = this.monitor.receiveReport(node, t, report.predictedDone, report.held === 0);
    this.held.set(node, report.held);
    this.incoming.set(node, 0);
    const plan = a.finished ? [] : this.plan(node, t, report);
    this.d.answer(node, finishRequest ? 2 : 1, a, plan);
    if (finishRequest) {
      for (const other of this.monitor.processes()) if (other !== node) this.d.requestReport(other);
    }
  }

  /** The reporting node's surplus over its assignment, given to the nodes furthest below theirs. */
  private plan(node: string, t: number, report: ProcessReport): Transfer[] {
    const B = this.d.blockSize;
    const own = this.monitor.worker(node)!;
    // With no speed measured for this process yet its share says nothing: leave its blocks where they are.
    if (own.speed() <= 0) return [];
    let surplus = report.held - Math.max(0, own.assigned - report.predictedDone);
    if (surplus < B) return [];
    const short = this.monitor.processes()
      .filter((n) => n !== node)
      .map((n) => {
        const w = this.monitor.worker(n)!;
        const needs = Math.max(0, w.assigned - w.predDone(t)) - (this.held.get(n) ?? 0) - (this.incoming.get(n) ?? 0);
        return { n, needs };
      })
      .filter((x) => x.needs >= B)
      .sort((a, b) => b.needs - a.needs || (a.n < b.n ? -1 : 1));
    const out: Transfer[] = [];
    for (const { n, needs } of short) {
      if (surplus < B) break;
      const give = Math.floor(Math.min(surplus, needs) / B) * B;
      if (give < B) continue;
      out.push({ to: n, iterations: give });
      this.incoming.set(n, (this.incoming.get(n) ?? 0) + give);
      surplus -= give;
      this.transfers++;
    }
    return out;
  }
}
