/**
 * A node's own figures in its metrics registry, read at scrape time: whether it is ready, its workers
 * and queue, the job it takes part in now, and counters over the node's life by job kind (tasks,
 * splits, steals, migrations, coordination operations, jobs left), which keep growing across jobs as
 * Prometheus counters must. The kind's own figures of the current job are gauges.
 *
 * Bounded labels: a job id appears only on `tidepool_node_job`, for the one job the node takes part
 * in now; everything else is labelled by kind (at most MAX_KINDS, further kinds count as "other"),
 * direction, operation, or a figure's name.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import type { PrometheusRegistry } from '../metrics/metrics-registry.js';
import { addStats, emptyStats } from '../../coord/recipes/recipe-stats.js';
import type { NodeCounters, NodeStats } from './node-stats.js';
import { promClient } from '../metrics/prom-client.js';

/** Kinds counted apart; a node that runs more kinds counts the rest as "other". */
export const MAX_KINDS = 32;
/** Figures of the current job shown at most. */
export const MAX_FIGURES = 64;

/** A node's stats now (what it publishes to the coordination service, see node-stats.ts). */
export type NodeReading = Omit<NodeStats, 'at'>;

export type JobEnd = 'finished' | 'drained' | 'failed';

const COUNTS = ['tasksDone', 'splits', 'stealsIn', 'stealsOut', 'migrationsIn', 'migrationsOut'] as const;

/** A kind's counters summed over the jobs a node left, and how it left them. */
interface KindTotals extends Pick<NodeCounters, (typeof COUNTS)[number] | 'coord'> {
  ended: Record<JobEnd, number>;
}

const COORD_OPS = ['reads', 'writes', 'transactions', 'retries'] as const;

export class NodeMetrics {
  private readonly totals = new Map<string, KindTotals>();
  /** The job whose final counters are in `totals` already (not counted again while the node still shows it). */
  private folded: string | undefined;

  constructor(prometheus: PrometheusRegistry, nodeId: string, private readonly read: () => NodeReading, ready: () => boolean) {
    const { Counter, Gauge } = promClient(); // present: the registry is prom-client's
    const registry = prometheus as Registry;
    const gauge = (name: string, help: string, labelNames: string[], fill: (set: (labels: Record<string, string>, v: number) => void) => void) =>
      new Gauge({
        name, help, labelNames, registers: [registry],
        collect(this: Gauge) {
          this.reset();
          fill((labels, v) => this.set(labels, v));
        },
      });
    const counter = (name: string, help: string, labelNames: string[], fill: (inc: (labels: Record<string, string>, v: number) => void) => void) =>
      new Counter({
        name, help, labelNames, registers: [registry],
        collect(this: Counter) {
          this.reset();
          fill((labels, v) => this.inc(labels, v));
        },
      });

    gauge('tidepool_node_info', 'The node this endpoint belongs to (always 1).', ['node'], (set) => set({ node: nodeId }, 1));
    gauge('tidepool_node_ready', 'Whether the node is in the cluster and takes work (1) or not yet / not any more (0).', [], (set) => set({}, ready() ? 1 : 0));
    gauge('tidepool_node_workers', 'Worker threads of the node.', [], (set) => set({}, this.read().workers));
    gauge('tidepool_node_busy_workers', 'Workers running a task now.', [], (set) => set({}, this.read().busy));
    gauge('tidepool_node_queue_depth', 'Tasks waiting in the node\'s pool.', [], (set) => set({}, this.read().queued));
    gauge('tidepool_node_job', 'The job the node takes part in now (1; no series while idle).', ['job', 'kind'], (set) => {
      const r = this.read();
      if (r.job !== null) set({ job: r.job, kind: r.kind ?? 'unknown' }, 1);
    });
    gauge('tidepool_node_kind_figure', 'The current job\'s own figures, as its kind reports them.', ['kind', 'figure'], (set) => {
      const r = this.read();
      if (r.job === null || !r.figures) return;
      for (const [figure, v] of Object.entries(r.figures).slice(0, MAX_FIGURES)) if (Number.isFinite(v)) set({ kind: r.kind ?? 'unknown', figure }, v);
    });
    const perKind = (fill: (inc: (labels: Record<string, string>, v: number) => void, kind: string, t: KindTotals) => void) =>
      (inc: (labels: Record<string, string>, v: number) => void) => {
        for (const [kind, t] of this.withCurrent()) fill(inc, kind, t);
      };
    counter('tidepool_node_tasks_completed_total', 'Tasks completed on this node, by job kind.', ['kind'], perKind((inc, kind, t) => inc({ kind }, t.tasksDone)));
    counter('tidepool_node_task_splits_total', 'Tasks split off (or spawned) on this node, by job kind.', ['kind'], perKind((inc, kind, t) => inc({ kind }, t.splits)));
    counter('tidepool_node_steals_total', 'Tasks moved by work stealing, by job kind and direction.', ['kind', 'direction'], perKind((inc, kind, t) => {
      inc({ kind, direction: 'in' }, t.stealsIn);
      inc({ kind, direction: 'out' }, t.stealsOut);
    }));
    counter('tidepool_node_migrations_total', 'Tasks moved off draining nodes, by job kind and direction.', ['kind', 'direction'], perKind((inc, kind, t) => {
      inc({ kind, direction: 'in' }, t.migrationsIn);
      inc({ kind, direction: 'out' }, t.migrationsOut);
    }));
    counter('tidepool_node_coord_operations_total', 'Coordination operations of the node\'s jobs (ledger and global variables), by job kind and operation.', ['kind', 'op'], perKind((inc, kind, t) => {
      for (const op of COORD_OPS) inc({ kind, op }, t.coord[op]);
    }));
    counter('tidepool_node_jobs_total', 'Jobs this node took part in and left, by job kind and how it left (finished, drained, failed).', ['kind', 'end'], perKind((inc, kind, t) => {
      for (const [end, n] of Object.entries(t.ended)) inc({ kind, end }, n);
    }));
  }

  /** The node leaves its job: its final counters join the node's totals. */
  jobLeft(final: NodeReading, end: JobEnd): void {
    if (final.job === null) return;
    const t = this.kindTotals(final.kind ?? 'unknown');
    add(t, final);
    t.ended[end]++;
    this.folded = final.job;
  }

  /** Totals by kind with the current job's counters added (not stored: they restart with the next job). */
  private withCurrent(): Map<string, KindTotals> {
    const r = this.read();
    if (r.job === null || r.job === this.folded) return this.totals;
    const all = new Map([...this.totals].map(([k, t]) => [k, { ...t, coord: { ...t.coord }, ended: { ...t.ended } }]));
    const kind = this.kindName(r.kind ?? 'unknown');
    const t = all.get(kind) ?? emptyTotals();
    add(t, r);
    all.set(kind, t);
    return all;
  }

  private kindTotals(kind: string): KindTotals {
    const name = this.kindName(kind);
    let t = this.totals.get(name);
    if (!t) this.totals.set(name, (t = emptyTotals()));
    return t;
  }

  private kindName(kind: string): string {
    return this.totals.has(kind) || this.totals.size < MAX_KINDS - 1 ? kind : 'other';
  }
}

function emptyTotals(): KindTotals {
  return { tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, coord: emptyStats(), ended: { finished: 0, drained: 0, failed: 0 } };
}

function add(t: KindTotals, r: NodeReading): void {
  for (const k of COUNTS) t[k] += r[k];
  t.coord = addStats(t.coord, r.coord);
}
