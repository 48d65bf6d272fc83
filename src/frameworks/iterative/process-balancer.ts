/**
 * RUPER-LB's process level on the job's leader (seed 001 §2.2, Fig. 4 left): the monitor asks each
 * member node for a report on that node's own schedule, registers its predicted iterations done in
 * the node's guess worker, and answers with the node's assignment. Beyond the seed, the answer says
 * where the node's surplus goes: iterations move between nodes as block ranges placed on the node
 * that is short (through the ledger, so exactly once), and nodes that join get a share at the next
 * answer, nodes that leave stop counting. The leader's own node is served by direct calls.
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

export interface ProcessBalancerDeps {
  nodeId: string;
  iterations: number;
  blockSize: number;
  params: RuperParams;
  now(): number;
  members(): string[];
  /** Asks a node for its report (instruction 1); the answer comes back through `onReport`. */
  requestReport(node: string): void;
  /** Sends a node its assignment and transfers. */
  answer(node: string, a: Assignment, transfers: Transfer[]): void;
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

  /** Instruction 0 for members the monitor has not seen; members that left stop counting. */
  private syncMembers(t: number): void {
    const live = new Set(this.d.members());
    for (const node of live) if (!this.monitor.worker(node)) this.d.answer(node, this.monitor.start(node, t), []);
    for (const node of this.monitor.processes()) {
      if (live.has(node)) continue;
      this.monitor.remove(node);
      this.held.delete(node);
      this.incoming.delete(node);
    }
  }

  /** Fig. 4 left's loop body: due report requests, then sleep until the next one is due. */
  tick(): void {
    if (this.stopped) return;
    const t = this.d.now();
    this.syncMembers(t);
    const { requestReports, timeout } = this.monitor.advance(t - this.lastTick);
    this.lastTick = t;
    for (const node of requestReports) this.d.requestReport(node);
    const ms = Math.max(5, Math.min(timeout, this.d.params.checkpointInterval) * 1000);
    this.cancelTimer = (this.d.setTimer ?? ((fn, x) => {
      const h = setTimeout(fn, x);
      h.unref?.();
      return () => clearTimeout(h);
    }))(() => this.tick(), ms);
  }

  /** Instructions 1 and 2: a node's report (or finish request, which also asks everyone else for a report). */
  onReport(node: string, report: ProcessReport, finishRequest: boolean): void {
    if (this.stopped) return;
    const t = this.d.now();
    if (!this.monitor.worker(node)) this.monitor.start(node, t);
    const a = this.monitor.receiveReport(node, t, report.predictedDone, report.held === 0);
    this.held.set(node, report.held);
    this.incoming.set(node, 0);
    const plan = a.finished ? [] : this.plan(node, t, report);
    this.d.answer(node, a, plan);
    if (finishRequest) for (const other of this.monitor.processes()) if (other !== node) this.d.requestReport(other);
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
