import { DEMO_INSTANCE, QUICK_INSTANCE, bundledInstance } from '../demo/bundled-instances.js';
import { runElasticDemo, type DemoReport, type DemoStatus } from '../demo/elastic-demo.js';
import { LiveLines } from '../demo/live-lines.js';
import { missingDashboardPackages } from '../../dashboard/dashboard-dependencies.js';
import { installCommand } from '../../util/optional-package.js';
import { InputError } from '../../frameworks/search/input-error.js';
import type { ScaleStep } from '../../runtime/client/scale-schedule.js';
import { jsonOption } from '../common-options.js';
import { DASHBOARD_PORT, dashboardPlace } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { defaultWorkers } from '../options.js';
import { Progress } from '../progress.js';
import { duration, kinds } from '../settings/kinds.js';
import type { PlanStep } from '../settings/scale-plan.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';
import { scaleSteps } from './solve.js';

interface DemoFlags {
  quick?: boolean;
  instance?: string;
  nodes: number;
  add: number;
  scaleOut?: number;
  scaleIn?: number;
  scale?: PlanStep[];
  workers?: number;
  compare?: boolean;
  dashboard: boolean | number;
  host: string;
  stay?: boolean;
  progress?: boolean | number;
  json?: boolean;
}

/**
 * `tidepool demo`: the elasticity experiment of TASKWORK (Kehrer and Blochinger, "TASKWORK: A
 * Cloud-aware Runtime System for Elastic Task-parallel HPC Applications", Fig. 6) live on an embedded
 * cluster, with the dashboard.
 */
export function registerDemo(program: SettingsCommand): void {
  const demo = program
    .command('demo')
    .description('solve a bundled TSP instance on an embedded cluster that scales out and back in while it runs, with a live dashboard: the elasticity experiment of TASKWORK (Kehrer and Blochinger), its Fig. 6')
    .option('--quick', `a short run (under 10 s): ${QUICK_INSTANCE}, 1 worker per node, out at 0.3 s, in at 1.2 s`)
    .setting('--instance <file>', `a TSPLIB .tsp file (default: the bundled ${DEMO_INSTANCE})`, kinds.file)
    .setting('--nodes <k>', 'nodes at the start', kinds.positiveInt, '1')
    .setting('--add <n>', 'nodes added at the scale-out and drained at the scale-in', kinds.count, '1')
    .setting('--scale-out <duration>', 'when to add nodes (default 3s; --quick 300ms)', duration('s'))
    .setting('--scale-in <duration>', 'when to drain them (default 12s; --quick 1.2s)', duration('s'))
    .setting('--scale <plan>', 'a whole plan instead of --add/--scale-out/--scale-in: WHEN:SIZE[,…], e.g. 2s:+2,5s:-1,8s:-1', kinds.timePlan)
    .setting('--workers <n>', 'worker threads per node (default: cores / (nodes + added), at least 1; --quick 1)', kinds.positiveInt)
    .option('--compare', 'also run the static baseline on the starting nodes and report S%, the change in speedup of TASKWORK\'s Eq. 1')
    .setting('--dashboard <port>', `serve the live dashboard on this port (default ${DASHBOARD_PORT}, or any free port if taken)`, kinds.optionalPort, true)
    .option('--no-dashboard', 'do not serve the dashboard')
    .setting('--host <host>', 'address the dashboard listens on', kinds.text, '127.0.0.1')
    .option('--stay', 'keep the cluster and dashboard up after the run, until Ctrl-C')
    .setting('--progress [every]', 'status lines on stderr also when it is not a terminal (a line every second, or as often as given); on a terminal they are redrawn in place', kinds.optionalDuration);
  jsonOption(demo, 'print one JSON object (objective, verified, solution, dashboard, stats, timeline, compare)')
    .addHelpText('after', `
Examples:
  npx tidepool demo                  # ${DEMO_INSTANCE}: 1 node, +1 at 3 s, drained at 12 s; dashboard at http://127.0.0.1:${DASHBOARD_PORT}/
  npx tidepool demo --quick --json   # the short run, one JSON object on stdout
  npx tidepool demo --nodes 2 --add 2 --scale-out 2s --scale-in 8s --compare`)
    .action(async (flags: DemoFlags) => {
      const opts = demoOptions(flags);
      const stopping = flags.stay ? stopSignal() : undefined;
      const live = new LiveLines();
      const human = !flags.json;
      // Status lines where LiveLines draws nothing (not a terminal): with --progress.
      const lines = live.enabled && human ? undefined : Progress.from(flags.progress ?? false, flags.json === true);
      let status: DemoStatus | undefined;
      const milestones: string[] = [];
      const draw = () => live.render([
        `  ${status ? statusLine(status) : 'starting…'}`,
        ...milestones.slice(-4).map((m) => `    ${m}`),
      ]);
      if (human) process.stdout.write(`tidepool demo: ${opts.instanceLabel}, ${opts.nodes} node(s) × ${opts.workers} worker(s), ${describeSchedule(opts.schedule)}\n`);
      const { report, close } = await runElasticDemo({
        instanceFile: opts.instanceFile, nodes: opts.nodes, workers: opts.workers, schedule: opts.schedule, compare: opts.compare,
        dashboard: opts.dashboard,
        onReady: (url) => {
          if (human && url) process.stdout.write(`dashboard: ${url}  (live while the demo runs; --stay keeps it up afterwards)\n`);
        },
        onStatus: (s) => {
          status = s;
          if (human) draw();
          lines?.update(statusLine(s));
        },
        onMilestone: (line) => {
          milestones.push(line);
          if (!human) return;
          if (live.enabled) draw();
          else process.stdout.write(`  ${line}\n`);
        },
      }).catch((err: unknown) => {
        if (err instanceof InputError) throw new UsageError(err.message);
        throw err;
      });
      live.done();
      lines?.end();
      try {
        if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else printReport(report);
        if (!report.verified) process.exitCode = 1;
        if (flags.stay && report.dashboard) {
          process.stderr.write(`dashboard stays up at ${report.dashboard} — Ctrl-C to stop\n`);
          await stopping;
        }
      } finally {
        await close();
      }
    });
}

function demoOptions(flags: DemoFlags) {
  const { nodes, add } = flags;
  let schedule: ScaleStep[];
  if (flags.scale !== undefined) {
    if (flags.scaleOut !== undefined || flags.scaleIn !== undefined) throw new UsageError('--scale replaces --scale-out/--scale-in: give one or the other');
    schedule = scaleSteps(flags.scale, nodes);
  } else {
    const out = flags.scaleOut ?? (flags.quick ? 300 : 3000);
    const inAt = flags.scaleIn ?? (flags.quick ? 1200 : 12_000);
    if (inAt <= out) throw new UsageError(`--scale-in (${inAt / 1000} s) must come after --scale-out (${out / 1000} s)`);
    schedule = add === 0 ? [] : [{ atMs: out, delta: add }, { atMs: inAt, delta: -add }];
  }
  const peak = schedule.reduce((acc, s) => ({ now: acc.now + s.delta, max: Math.max(acc.max, acc.now + s.delta) }), { now: nodes, max: nodes }).max;
  const workers = flags.workers ?? (flags.quick ? 1 : Math.max(1, Math.floor(defaultWorkers() / peak)));
  const instanceFile = flags.instance ?? bundledInstance(flags.quick ? QUICK_INSTANCE : DEMO_INSTANCE);
  let dashboard = dashboardPlace(flags.dashboard, flags.host);
  // The dashboard's packages are optional: by default the demo runs without them (an explicit --dashboard PORT needs them).
  const missing = flags.dashboard === true ? missingDashboardPackages() : [];
  if (missing.length > 0) {
    process.stderr.write(`note: no dashboard: it needs ${missing.join(', ')} (${installCommand(...missing)})\n`);
    dashboard = null;
  }
  const instanceLabel = flags.instance ?? `bundled ${flags.quick ? QUICK_INSTANCE : DEMO_INSTANCE}`;
  return { nodes, workers, schedule, instanceFile, instanceLabel, dashboard, compare: flags.compare === true };
}

function statusLine(s: DemoStatus): string {
  return `${s.phase === 'static' ? 'static ' : ''}${s.seconds.toFixed(1)} s · nodes ${s.nodes} · busy ${s.busyWorkers}/${s.workers} · ${s.tasksPerSec} tasks/s · steals ${s.steals} · migrations ${s.migrations} · incumbent ${s.incumbent ?? '–'}`;
}

function describeSchedule(schedule: ScaleStep[]): string {
  if (schedule.length === 0) return 'no scaling';
  return schedule.map((s) => `${s.delta > 0 ? '+' : '−'}${Math.abs(s.delta)} at ${s.atMs / 1000} s`).join(', ');
}

function printReport(r: DemoReport): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const check = r.verified ? 'verified: re-computed from the file' + (r.optimum !== null ? ', equals the published optimum' : '') : `NOT verified${r.optimum !== null ? ` (published optimum ${r.optimum})` : ''}`;
  out(`optimal tour of ${r.instance.name} (${r.instance.cities} cities): length ${r.objective} — ${check}`);
  out(`tour: ${r.solution.join(' ')}`);
  const s = r.stats;
  out(`${s.seconds.toFixed(2)} s, ${s.searchNodes} search nodes, ${s.tasks} tasks, ${s.steals} steals, ${s.migrations} migrations, ${s.nodesJoined} node(s) joined, ${s.nodesLeft} left`);
  out(`nodes over time: ${r.timeline.map((p) => `${p.t.toFixed(1)}s→${p.nodes}`).join('  ')}`);
  if (r.compare) {
    out(`static run on the starting nodes: ${r.compare.staticSeconds.toFixed(2)} s; elastic: ${r.compare.elasticSeconds.toFixed(2)} s; S% = ${r.compare.speedupChangePercent >= 0 ? '+' : ''}${r.compare.speedupChangePercent}% (TASKWORK's Eq. 1; single runs)`);
  }
}
