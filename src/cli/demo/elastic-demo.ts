import { ClusterMonitor } from '../../dashboard/cluster-monitor.js';
import type { DashboardServer } from '../../dashboard/dashboard-server.js';
import type { ClusterSnapshot } from '../../dashboard/snapshot.js';
import { jobIncumbent } from '../../dashboard/snapshot-builder.js';
import { APPLICATIONS, type Application } from '../../frameworks/search/applications.js';
import { solveOnCluster, type SolveStats } from '../../frameworks/search/solve.js';
import type { TspInstance } from '../../frameworks/search/tsp/tsplib.js';
import { Cluster, type ClusterEvent } from '../../runtime/client/cluster.js';
import type { ScaleStep } from '../../runtime/client/scale-schedule.js';
import { listenDashboard, type DashboardPlace } from '../dashboard-option.js';
import { knownOptimum } from './bundled-instances.js';

export interface DemoOptions {
  /** A TSPLIB file. */
  instanceFile: string;
  /** Nodes at the start (k in the elasticity experiment of TASKWORK, Kehrer and Blochinger, Fig. 6). */
  nodes: number;
  workers: number;
  /** When to add and remove nodes. */
  schedule: ScaleStep[];
  /** Also run the static baseline on `nodes` nodes and report S% (TASKWORK's change in speedup, its Eq. 1). */
  compare: boolean;
  /** Where to serve the dashboard (null: none). With `anyPortIfBusy` a taken port falls back to a free one. */
  dashboard: DashboardPlace | null;
  /** Monitor tick (ms): how often the display and dashboard update. */
  tickMs?: number;
  /** Called once the cluster runs and the dashboard (if any) serves, before the solve starts. */
  onReady?: (dashboardUrl: string | null) => void;
  onStatus?: (status: DemoStatus) => void;
  /** Milestones as they happen ("scaled out to 3 nodes"). */
  onMilestone?: (line: string) => void;
}

/** What the live display shows, once per tick. */
export interface DemoStatus {
  phase: 'static' | 'elastic';
  seconds: number;
  nodes: number;
  busyWorkers: number;
  workers: number;
  tasksPerSec: number;
  steals: number;
  migrations: number;
  incumbent: number | null;
}

export interface DemoReport {
  problem: 'tsp';
  instance: { name: string; cities: number; file: string };
  objective: number;
  /** Published optimum for bundled instances, else null. */
  optimum: number | null;
  /** The tour's length re-computed from the instance equals the solver's objective (and the optimum, when known). */
  verified: boolean;
  /** 1-based TSPLIB city numbers starting at city 1. */
  solution: number[];
  dashboard: string | null;
  stats: SolveStats;
  /** Nodes in the job over time (s since the job started). */
  timeline: Array<{ t: number; nodes: number }>;
  schedule: Array<{ atSeconds: number; delta: number }>;
  compare: { staticSeconds: number; elasticSeconds: number; speedupChangePercent: number } | null;
}

export interface DemoRun {
  report: DemoReport;
  /** Stops the dashboard and the cluster (the CLI may keep them up first, for --stay). */
  close(): Promise<void>;
}

/**
 * TASKWORK's elasticity experiment (Kehrer and Blochinger, Fig. 6) on an embedded cluster: solve a TSP instance starting on k
 * nodes, add nodes at t1, drain them (their tasks migrate) at t2; optionally first the static run
 * on k nodes for S% = (S_E − S_k) / S_k · 100 = (T_k / T_E − 1) · 100 (the sequential time cancels).
 */
export async function runElasticDemo(opts: DemoOptions): Promise<DemoRun> {
  const app = APPLICATIONS.tsp as unknown as Application<TspInstance>;
  const instance = app.load(opts.instanceFile);
  const tickMs = opts.tickMs ?? 500;
  const cluster = await Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, progressIntervalMs: tickMs });
  const monitor = new ClusterMonitor(cluster.coordination, { intervalMs: tickMs });
  let server: DashboardServer | undefined;
  const close = async () => {
    await server?.close();
    await monitor.stop();
    await cluster.close();
  };
  try {
    await monitor.start();
    if (opts.dashboard) server = await listenDashboard(monitor, opts.dashboard);
    opts.onReady?.(server?.url ?? null);
    let staticSeconds: number | null = null;
    if (opts.compare) {
      opts.onMilestone?.(`static run on ${opts.nodes} node(s) first (the baseline of S%)`);
      const baseline = await run('static', []);
      staticSeconds = baseline.stats.seconds;
      opts.onMilestone?.(`static run: ${staticSeconds.toFixed(2)} s, tour ${baseline.result.value}`);
    }
    const elastic = await run('elastic', opts.schedule);
    const report = app.report(instance, elastic.result);
    const optimum = knownOptimum(instance.name);
    const objective = report.objective;
    return {
      close,
      report: {
        problem: 'tsp',
        instance: { name: instance.name, cities: instance.dimension, file: opts.instanceFile },
        objective,
        optimum,
        verified: report.verified === true && (optimum === null || optimum === objective),
        solution: report.solution as number[],
        dashboard: server?.url ?? null,
        stats: elastic.stats,
        timeline: elastic.timeline,
        schedule: opts.schedule.map((s) => ({ atSeconds: s.atMs / 1000, delta: s.delta })),
        compare: staticSeconds === null ? null : {
          staticSeconds,
          elasticSeconds: elastic.stats.seconds,
          speedupChangePercent: Math.round((staticSeconds / elastic.stats.seconds - 1) * 1000) / 10,
        },
      },
    };
  } catch (err) {
    await close();
    throw err;
  }

  async function run(phase: DemoStatus['phase'], schedule: ScaleStep[]) {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const timeline: Array<{ t: number; nodes: number }> = [];
    let inJob = 0;
    let steals = 0;
    let migrations = 0;
    const onEvent = (e: ClusterEvent) => {
      if (e.type === 'steal') steals++;
      if (e.type === 'migration') migrations++;
      if (e.type !== 'job-joined' && e.type !== 'job-left') return;
      inJob += e.type === 'job-joined' ? 1 : -1;
      const t = Math.round(seconds() * 100) / 100;
      timeline.push({ t, nodes: inJob });
      if (e.type === 'job-joined' && t > 0.05 && inJob > 0) opts.onMilestone?.(`${t.toFixed(1)} s: node ${e.node} joined → ${inJob} node(s)`);
      if (e.type === 'job-left' && e.reason === 'drained') opts.onMilestone?.(`${t.toFixed(1)} s: node ${e.node} drained (its tasks migrated) → ${inJob} node(s)`);
    };
    const off = monitor.on((s: ClusterSnapshot) => {
      const job = s.jobs.find((j) => j.state === 'running');
      const active = s.nodes.filter((n) => n.job !== null);
      opts.onStatus?.({
        phase, seconds: seconds(), nodes: active.length,
        busyWorkers: active.reduce((a, n) => a + n.busy, 0), workers: active.reduce((a, n) => a + n.workers, 0),
        tasksPerSec: s.point.tasksPerSec, steals, migrations, incumbent: (job && jobIncumbent(job.vars)) ?? null,
      });
    });
    try {
      const out = await solveOnCluster(app, instance, {
        cluster, nodes: opts.nodes, workers: opts.workers, jobNodes: opts.nodes, noPrune: false, schedule, onEvent,
      });
      return { ...out, timeline };
    } finally {
      off();
    }
  }
}
