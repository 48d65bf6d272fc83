import type { Counter, Gauge, Registry } from 'prom-client';
import { MetricsRegistry } from '../runtime/metrics/metrics-registry.js';
import { promClient } from './dashboard-dependencies.js';
import type { ClusterMonitor } from './cluster-monitor.js';
import type { ClusterSnapshot, NodeView } from './snapshot.js';

type Sample = [labels: Record<string, string>, value: number];

/**
 * Prometheus metrics of the whole cluster, served by the monitor: every node publishes its counters
 * to the coordination service, so one scrape target covers all nodes and jobs. Values come from the
 * monitor's latest snapshot at scrape time. The registry is the one a node's endpoint serves
 * (runtime/metrics), with the monitor process's own figures under `tidepool_monitor_`.
 */
export function clusterMetrics(monitor: ClusterMonitor, opts: { processMetrics?: boolean } = {}): MetricsRegistry {
  const { Counter, Gauge } = promClient();
  const metrics = new MetricsRegistry({ processMetrics: opts.processMetrics ?? true, prefix: 'tidepool_monitor_' });
  const registry = metrics.prometheus as Registry; // prom-client's, loaded above
  const current = () => monitor.snapshot;

  const define = (kind: 'gauge' | 'counter', name: string, help: string, labelNames: string[], samples: (s: ClusterSnapshot) => Sample[]) => {
    const Metric = kind === 'gauge' ? Gauge : Counter;
    new Metric({
      name, help, labelNames, registers: [registry],
      collect(this: Gauge | Counter) {
        this.reset();
        const snapshot = current();
        if (!snapshot) return;
        // Counters mirror the nodes' own cumulative counts; reset+inc sets them to that value.
        for (const [labels, value] of samples(snapshot)) {
          if (this instanceof Gauge) this.set(labels, value);
          else this.inc(labels, value);
        }
      },
    });
  };
  const perNode = (value: (n: NodeView) => number) => (s: ClusterSnapshot): Sample[] =>
    s.nodes.map((n) => [{ node: n.id, job: n.job ?? '' }, value(n)]);

  define('gauge', 'tidepool_nodes', 'Live nodes in the cluster.', [], (s) => [[{}, s.nodes.length]]);
  define('gauge', 'tidepool_active_nodes', 'Nodes taking part in a job.', [], (s) => [[{}, s.point.activeNodes]]);
  define('gauge', 'tidepool_node_workers', 'Worker threads of a node.', ['node', 'job'], perNode((n) => n.workers));
  define('gauge', 'tidepool_node_busy_workers', 'Workers of a node running a task now.', ['node', 'job'], perNode((n) => n.busy));
  define('gauge', 'tidepool_node_queue_depth', 'Tasks waiting in a node\'s pool.', ['node', 'job'], perNode((n) => n.queued));
  define('counter', 'tidepool_tasks_completed_total', 'Tasks completed by a node in its current job.', ['node', 'job'], perNode((n) => n.tasksDone));
  define('counter', 'tidepool_task_splits_total', 'Potential splits that created a task.', ['node', 'job'], perNode((n) => n.splits));
  define('counter', 'tidepool_steals_total', 'Tasks moved by work stealing, by direction.', ['node', 'job', 'direction'], (s) =>
    s.nodes.flatMap((n): Sample[] => [[{ node: n.id, job: n.job ?? '', direction: 'in' }, n.stealsIn], [{ node: n.id, job: n.job ?? '', direction: 'out' }, n.stealsOut]]));
  define('counter', 'tidepool_migrations_total', 'Tasks moved off draining nodes, by direction.', ['node', 'job', 'direction'], (s) =>
    s.nodes.flatMap((n): Sample[] => [[{ node: n.id, job: n.job ?? '', direction: 'in' }, n.migrationsIn], [{ node: n.id, job: n.job ?? '', direction: 'out' }, n.migrationsOut]]));
  for (const op of ['reads', 'writes', 'transactions', 'retries'] as const) {
    define('counter', `tidepool_coord_${op}_total`, `Coordination ${op} of a node's job (ledger and global variables).`, ['node', 'job'], perNode((n) => n.coord[op]));
  }
  define('gauge', 'tidepool_jobs', 'Jobs known to the cluster, by state.', ['state'], (s) =>
    (['running', 'done', 'failed', 'cancelled'] as const).map((state): Sample => [{ state }, s.jobs.filter((j) => j.state === state).length]));
  define('gauge', 'tidepool_job_tasks_completed', 'Tasks a job has completed (exact once it is done).', ['job', 'state'], (s) =>
    s.jobs.map((j): Sample => [{ job: j.id, state: j.state }, j.tasksDone]));
  define('gauge', 'tidepool_job_nodes', 'Nodes taking part in a job.', ['job'], (s) =>
    s.jobs.filter((j) => j.state === 'running').map((j): Sample => [{ job: j.id }, j.nodes]));
  define('gauge', 'tidepool_job_variable', 'Numeric global variables of running jobs (e.g. a search\'s incumbent bound).', ['job', 'name'], (s) =>
    s.jobs.filter((j) => j.state === 'running').flatMap((j) => Object.entries(j.vars).map(([name, v]): Sample => [{ job: j.id, name }, v])));
  return metrics;
}
