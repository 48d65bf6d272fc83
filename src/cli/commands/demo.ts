import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { DEMO_INSTANCE, QUICK_INSTANCE, bundledInstance } from '../demo/bundled-instances.js';
import { runElasticDemo, type DemoReport, type DemoStatus } from '../demo/elastic-demo.js';
import { LiveLines } from '../demo/live-lines.js';
import { missingDashboardPackages } from '../../dashboard/dashboard-dependencies.js';
import { installCommand } from '../../util/optional-package.js';
import { InputError } from '../../frameworks/search/input-error.js';
import { parseScaleSchedule, type ScaleStep } from '../../runtime/scale-schedule.js';
import { UsageError } from '../errors.js';
import { stopSignal } from '../stop-signal.js';
import { defaultWorkers, nonNegativeInt, port, positiveInt } from '../options.js';

interface DemoFlags {
  quick?: boolean;
  instance?: string;
  nodes?: string;
  add?: string;
  scaleOut?: string;
  scaleIn?: string;
  scale?: string;
  workers?: string;
  compare?: boolean;
  dashboard: string | boolean;
  host: string;
  stay?: boolean;
  json?: boolean;
}

/** Default demo port; a taken port falls back to any free one. */
const DASHBOARD_PORT = 7470;

/** `tidepool demo`: seed 000's elasticity experiment (Fig. 6) live on an embedded cluster, with the dashboard. */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('solve a bundled TSP instance on an embedded cluster that scales out and back in while it runs, with a live dashboard')
    .option('--quick', `a short run (under 10 s): ${QUICK_INSTANCE}, 1 worker per node, out at 0.3 s, in at 1.2 s`)
    .option('--instance <file>', `a TSPLIB .tsp file (default: the bundled ${DEMO_INSTANCE})`)
    .option('--nodes <k>', 'nodes at the start', '1')
    .option('--add <n>', 'nodes added at the scale-out and drained at the scale-in', '1')
    .option('--scale-out <seconds>', 'when to add nodes (default 3; --quick 0.3)')
    .option('--scale-in <seconds>', 'when to drain them (default 12; --quick 1.2)')
    .option('--scale <schedule>', 'a full schedule instead of --add/--scale-out/--scale-in, e.g. 2s:+2,5s:-1,8s:-1')
    .option('--workers <n>', 'worker threads per node (default: cores / (nodes + added), at least 1; --quick 1)')
    .option('--compare', 'also run the static baseline on the starting nodes and report S% (seed 000, Eq. 1)')
    .option('--dashboard <port>', `serve the live dashboard on this port (default ${DASHBOARD_PORT}, or any free port if taken)`, true)
    .option('--no-dashboard', 'do not serve the dashboard')
    .option('--host <host>', 'address the dashboard listens on', '127.0.0.1')
    .option('--stay', 'keep the cluster and dashboard up after the run, until Ctrl-C')
    .option('--json', 'print one JSON object (objective, verified, solution, dashboard, stats, timeline, compare)')
    .addHelpText('after', `
Examples:
  npx tidepool demo                      ${DEMO_INSTANCE}: 1 node, +1 at 3 s, drained at 12 s; dashboard at http://127.0.0.1:${DASHBOARD_PORT}/
  npx tidepool demo --quick --json       the short run, one JSON object on stdout
  npx tidepool demo --nodes 2 --add 2 --scale-out 2 --scale-in 8 --compare`)
    .action(async (flags: DemoFlags) => {
      const opts = demoOptions(flags);
      const live = new LiveLines();
      const human = !flags.json;
      let status: DemoStatus | undefined;
      const milestones: string[] = [];
      const draw = () => live.render([
        `  ${status ? `${status.phase === 'static' ? 'static ' : ''}${status.seconds.toFixed(1)} s · nodes ${status.nodes} · busy ${status.busyWorkers}/${status.workers} · ${status.tasksPerSec} tasks/s · steals ${status.steals} · migrations ${status.migrations} · incumbent ${status.incumbent ?? '–'}` : '  starting…'}`,
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
      try {
        if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else printReport(report);
        if (!report.verified) process.exitCode = 1;
        if (flags.stay && report.dashboard) {
          process.stderr.write(`dashboard stays up at ${report.dashboard} — Ctrl-C to stop\n`);
          await stopSignal();
        }
      } finally {
        await close();
      }
    });
}

function demoOptions(flags: DemoFlags) {
  const nodes = positiveInt(flags.nodes ?? '1', '--nodes');
  const add = nonNegativeInt(flags.add ?? '1', '--add');
  let schedule: ScaleStep[];
  if (flags.scale !== undefined) {
    if (flags.scaleOut !== undefined || flags.scaleIn !== undefined) throw new UsageError('--scale replaces --scale-out/--scale-in: give one or the other');
    try {
      schedule = parseScaleSchedule(flags.scale);
    } catch (err) {
      throw new UsageError(`--scale: ${(err as Error).message}`);
    }
  } else {
    const out = seconds(flags.scaleOut ?? (flags.quick ? '0.3' : '3'), '--scale-out');
    const inAt = seconds(flags.scaleIn ?? (flags.quick ? '1.2' : '12'), '--scale-in');
    if (inAt <= out) throw new UsageError(`--scale-in (${inAt} s) must come after --scale-out (${out} s)`);
    schedule = add === 0 ? [] : [{ atMs: out * 1000, delta: add }, { atMs: inAt * 1000, delta: -add }];
  }
  const peak = schedule.reduce((acc, s) => ({ now: acc.now + s.delta, max: Math.max(acc.max, acc.now + s.delta) }), { now: nodes, max: nodes }).max;
  const workers = flags.workers !== undefined ? positiveInt(flags.workers, '--workers')
    : flags.quick ? 1 : Math.max(1, Math.floor(defaultWorkers() / peak));
  const instanceFile = flags.instance ?? bundledInstance(flags.quick ? QUICK_INSTANCE : DEMO_INSTANCE);
  if (flags.instance !== undefined && !existsSync(flags.instance)) throw new UsageError(`--instance: no such file: ${flags.instance}`);
  let dashboard: { host: string; port: number; anyPortIfBusy: boolean } | null = null;
  if (flags.dashboard !== false) {
    dashboard = flags.dashboard === true
      ? { host: flags.host, port: DASHBOARD_PORT, anyPortIfBusy: true }
      : { host: flags.host, port: port(flags.dashboard, '--dashboard'), anyPortIfBusy: false };
  }
  // The dashboard's packages are optional: by default the demo runs without them (an explicit --dashboard PORT needs them).
  const missing = flags.dashboard === true ? missingDashboardPackages() : [];
  if (missing.length > 0) {
    process.stderr.write(`note: no dashboard: it needs ${missing.join(', ')} (${installCommand(...missing)})\n`);
    dashboard = null;
  }
  const instanceLabel = flags.instance ?? `bundled ${flags.quick ? QUICK_INSTANCE : DEMO_INSTANCE}`;
  return { nodes, workers, schedule, instanceFile, instanceLabel, dashboard, compare: flags.compare === true };
}

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || value.trim() === '') throw new UsageError(`${flag}: "${value}" is not a number of seconds ≥ 0`);
  return n;
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
    out(`static run on the starting nodes: ${r.compare.staticSeconds.toFixed(2)} s; elastic: ${r.compare.elasticSeconds.toFixed(2)} s; S% = ${r.compare.speedupChangePercent >= 0 ? '+' : ''}${r.compare.speedupChangePercent}% (seed 000, Eq. 1; single runs)`);
  }
}
