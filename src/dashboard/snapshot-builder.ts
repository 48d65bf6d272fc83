import type { ClusterReading } from './cluster-reader.js';
import type { ClusterSnapshot, JobView, NodeView, TimelinePoint } from './snapshot.js';

/** Counters we turn into rates, per node. */
interface Counters {
  job: string | null;
  tasksDone: number;
  steals: number;
  migrations: number;
}

/**
 * Turns successive readings into snapshots: rates from counter deltas (a node's counters restart
 * when it changes job), per-job task totals that survive nodes leaving, and a bounded timeline.
 * Pure: no I/O and no clock of its own, so tests feed it readings directly.
 */
export class SnapshotBuilder {
  private readonly previous = new Map<string, Counters>();
  private readonly firstSeen = new Map<string, number>();
  private readonly jobTasks = new Map<string, number>();
  private readonly timeline: TimelinePoint[] = [];
  private lastAt: number | undefined;

  constructor(private readonly historyPoints = 600) {}

  history(): TimelinePoint[] {
    return [...this.timeline];
  }

  add(reading: ClusterReading): ClusterSnapshot {
    const seconds = this.lastAt === undefined ? 0 : Math.max(0.001, (reading.at - this.lastAt) / 1000);
    this.lastAt = reading.at;
    let tasks = 0;
    let steals = 0;
    let migrations = 0;
    const nodes: NodeView[] = [];
    const live = new Set<string>();
    for (const { info, stats } of reading.nodes) {
      live.add(info.id);
      if (!this.firstSeen.has(info.id)) this.firstSeen.set(info.id, reading.at);
      const now: Counters = {
        job: stats?.job ?? null,
        tasksDone: stats?.tasksDone ?? 0,
        steals: stats?.stealsIn ?? 0,
        migrations: stats?.migrationsOut ?? 0,
      };
      const before = this.previous.get(info.id);
      const same = before !== undefined && before.job === now.job;
      const dTasks = delta(same ? before.tasksDone : 0, now.tasksDone);
      tasks += dTasks;
      steals += delta(same ? before.steals : 0, now.steals);
      migrations += delta(same ? before.migrations : 0, now.migrations);
      if (now.job) this.jobTasks.set(now.job, (this.jobTasks.get(now.job) ?? 0) + dTasks);
      this.previous.set(info.id, now);
      nodes.push({
        id: info.id,
        address: info.address,
        workers: stats?.workers ?? info.workers,
        job: info.job,
        busy: stats?.busy ?? 0,
        queued: stats?.queued ?? 0,
        tasksDone: now.tasksDone,
        splits: stats?.splits ?? 0,
        stealsIn: stats?.stealsIn ?? 0,
        stealsOut: stats?.stealsOut ?? 0,
        migrationsIn: stats?.migrationsIn ?? 0,
        migrationsOut: stats?.migrationsOut ?? 0,
        tasksPerSec: seconds > 0 ? round(dTasks / seconds) : 0,
        coord: stats?.coord ?? { reads: 0, writes: 0, transactions: 0, retries: 0 },
        firstSeen: this.firstSeen.get(info.id)!,
      });
    }
    for (const id of [...this.previous.keys()]) {
      if (!live.has(id)) {
        this.previous.delete(id);
        this.firstSeen.delete(id);
      }
    }
    const jobs: JobView[] = reading.jobs.map((j): JobView => {
      const outcome = j.outcome;
      return {
        id: j.id,
        task: j.spec.ref.module,
        state: outcome ? outcome.status : 'running',
        nodes: nodes.filter((n) => n.job === j.id).length,
        requested: j.spec.nodes,
        createdAt: j.spec.createdAt,
        finishedAt: outcome ? outcome.finishedAt : null,
        // A finished job knows its exact count; a running one has what the monitor has seen.
        tasksDone: outcome?.status === 'done' ? outcome.completions : (this.jobTasks.get(j.id) ?? 0),
        vars: j.vars,
        error: outcome?.status === 'failed' ? outcome.error : null,
      };
    }).sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
    for (const id of [...this.jobTasks.keys()]) if (!jobs.some((j) => j.id === id && j.state === 'running')) this.jobTasks.delete(id);
    const incumbent: Record<string, number> = {};
    for (const j of jobs) if (j.state === 'running' && j.vars.bound !== undefined) incumbent[j.id] = j.vars.bound;
    const point: TimelinePoint = {
      t: reading.at,
      nodes: nodes.length,
      activeNodes: nodes.filter((n) => n.job !== null).length,
      busyWorkers: nodes.reduce((s, n) => s + n.busy, 0),
      tasksPerSec: seconds > 0 ? round(tasks / seconds) : 0,
      stealsPerSec: seconds > 0 ? round(steals / seconds) : 0,
      migrationsPerSec: seconds > 0 ? round(migrations / seconds) : 0,
      incumbent,
    };
    this.timeline.push(point);
    if (this.timeline.length > this.historyPoints) this.timeline.splice(0, this.timeline.length - this.historyPoints);
    return { at: reading.at, nodes, jobs, point };
  }
}

/** Growth of a cumulative counter; a smaller value means it restarted. */
function delta(before: number, now: number): number {
  return now >= before ? now - before : now;
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
