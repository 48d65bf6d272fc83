import type { ClusterReading } from './cluster-reader.js';
import { EventStore } from './event-store.js';
import { FigureHistory } from './figure-history.js';
import type { ClusterSnapshot, EventListView, JobFigureHistory, JobView, NodeView, TimelinePoint } from './snapshot.js';

/** Counters we turn into rates, per node. */
interface Counters {
  job: string | null;
  tasksDone: number;
  steals: number;
  migrations: number;
}

/** Running totals at one reading: rates are taken over a window of these. */
interface Totals {
  t: number;
  tasks: number;
  steals: number;
  migrations: number;
}

/**
 * Growth per second over the samples kept (the rate window). A window (rather than the last tick)
 * because nodes publish on their own timers: one tick may catch two publications, the next none.
 */
function rate(samples: Totals[], key: Exclude<keyof Totals, 't'>): number {
  const last = samples.at(-1);
  if (!last) return 0;
  const first = samples[0]!; // trimOld keeps the newest sample at or before the window's start first
  const seconds = (last.t - first.t) / 1000;
  return seconds > 0 ? round((last[key] - first[key]) / seconds) : 0;
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
  private readonly totals: Totals[] = [];
  private readonly nodeTotals = new Map<string, Totals[]>();
  private readonly figureHistory: FigureHistory;
  private readonly events = new EventStore();

  /** @param rateWindowMs how far back rates look (default 2 s) */
  constructor(private readonly historyPoints = 600, private readonly rateWindowMs = 2_000) {
    this.figureHistory = new FigureHistory({ points: historyPoints });
  }

  history(): TimelinePoint[] {
    return [...this.timeline];
  }

  /** Every job's kind figures over time. */
  figures(): JobFigureHistory[] {
    return this.figureHistory.all();
  }

  /** Every event list held (kinds' and event sources'). */
  eventLists(): EventListView[] {
    return this.events.all();
  }

  private trim(samples: Totals[], now: number): void {
    trimOld(samples, now, this.rateWindowMs);
  }

  add(reading: ClusterReading): ClusterSnapshot {
    let tasks = 0;
    let steals = 0;
    let migrations = 0;
    const nodes: NodeView[] = [];
    const live = new Set<string>();
    const events: EventListView[] = [];
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
      if (info.job !== null && stats?.kind && stats.events) events.push(...this.events.merge(stats.kind, stats.events, { job: stats.job ?? info.job, lane: info.id }));
      const own = this.nodeTotals.get(info.id) ?? [];
      own.push({ t: reading.at, tasks: (own.at(-1)?.tasks ?? 0) + dTasks, steals: 0, migrations: 0 });
      this.trim(own, reading.at);
      this.nodeTotals.set(info.id, own);
      nodes.push({
        id: info.id,
        address: info.address,
        workers: stats?.workers ?? info.workers,
        job: info.job,
        kind: info.job !== null ? stats?.kind ?? null : null,
        figures: info.job !== null ? numericFigures(stats?.figures) : {},
        busy: stats?.busy ?? 0,
        queued: stats?.queued ?? 0,
        tasksDone: now.tasksDone,
        splits: stats?.splits ?? 0,
        stealsIn: stats?.stealsIn ?? 0,
        stealsOut: stats?.stealsOut ?? 0,
        migrationsIn: stats?.migrationsIn ?? 0,
        migrationsOut: stats?.migrationsOut ?? 0,
        // An idle node completes nothing now, whatever its window still remembers.
        tasksPerSec: info.job === null ? 0 : rate(own, 'tasks'),
        coord: stats?.coord ?? { reads: 0, writes: 0, transactions: 0, retries: 0 },
        firstSeen: this.firstSeen.get(info.id)!,
      });
    }
    for (const source of reading.sources ?? []) events.push(...this.events.merge(source.name, (source.data as { lists?: unknown } | null)?.lists));
    this.figureHistory.add(reading.at, nodes);
    for (const id of [...this.previous.keys()]) {
      if (!live.has(id)) {
        this.previous.delete(id);
        this.firstSeen.delete(id);
        this.nodeTotals.delete(id);
      }
    }
    const jobs: JobView[] = reading.jobs.map((j): JobView => {
      const outcome = j.outcome;
      return {
        id: j.id,
        task: j.spec.label,
        state: outcome ? outcome.status : 'running',
        nodes: nodes.filter((n) => n.job === j.id).length,
        requested: j.spec.nodes.requested,
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
    for (const j of jobs) {
      const value = jobIncumbent(j.vars);
      if (j.state === 'running' && value !== undefined) incumbent[j.id] = value;
    }
    const before = this.totals.at(-1) ?? { tasks: 0, steals: 0, migrations: 0 };
    this.totals.push({ t: reading.at, tasks: before.tasks + tasks, steals: before.steals + steals, migrations: before.migrations + migrations });
    this.trim(this.totals, reading.at);
    const point: TimelinePoint = {
      t: reading.at,
      nodes: nodes.length,
      activeNodes: nodes.filter((n) => n.job !== null).length,
      busyWorkers: nodes.reduce((s, n) => s + n.busy, 0),
      tasksPerSec: rate(this.totals, 'tasks'),
      stealsPerSec: rate(this.totals, 'steals'),
      migrationsPerSec: rate(this.totals, 'migrations'),
      incumbent,
      jobNodes: countBy(nodes, (n) => n.job),
    };
    this.timeline.push(point);
    if (this.timeline.length > this.historyPoints) this.timeline.splice(0, this.timeline.length - this.historyPoints);
    return { at: reading.at, nodes, jobs, point, events };
  }
}

/** Drops samples older than the rate window needs (one older than the window is kept as its start). */
function trimOld(samples: Totals[], now: number, windowMs: number): void {
  while (samples.length > 2 && samples[1]!.t <= now - windowMs) samples.shift();
}

/** How many items have each key (items with no key are not counted). */
function countBy<T>(items: T[], key: (item: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const k = key(item);
    if (k !== null) out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Growth of a cumulative counter; a smaller value means it restarted. */
function delta(before: number, now: number): number {
  return now >= before ? now - before : now;
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Figures kept per node (the table's columns, the history's series). */
const MAX_FIGURES = 64;

/** A kind's figures as published, numbers only (what another process wrote is not trusted to be well-formed). */
function numericFigures(figures: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof figures !== 'object' || figures === null) return out;
  for (const [k, v] of Object.entries(figures)) {
    if (typeof v === 'number' && Number.isFinite(v) && /^[\w.-]{1,64}$/.test(k)) out[k] = v;
    if (Object.keys(out).length >= MAX_FIGURES) break; // bounded, whatever a node publishes
  }
  return out;
}

/** A job's incumbent for the chart: a search's `incumbent` variable, or a `bound` kept as a plain number. */
export function jobIncumbent(vars: Readonly<Record<string, number>>): number | undefined {
  return vars.incumbent ?? vars.bound;
}
