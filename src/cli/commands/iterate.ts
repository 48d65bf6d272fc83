import { ITERATIVE_APPLICATIONS } from '../../frameworks/iterative/apps/applications.js';
import { STRATEGIES, type BalanceStrategy } from '../../frameworks/iterative/iterative-types.js';
import { runIterativeApplication } from '../../frameworks/iterative/run-application.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { defaultWorkers } from '../options.js';
import { Progress } from '../progress.js';
import { kinds, oneOf } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { workCluster } from '../work-cluster.js';

interface IterateFlags {
  iterations?: number;
  nodes: number;
  workers?: number;
  balance: BalanceStrategy;
  seed: number;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

/** `tidepool iterate APP`: a Monte Carlo run balanced across threads and nodes, checked against its closed form. */
export function registerIterateCommand(program: SettingsCommand): void {
  const iterate = program
    .command('iterate')
    .argument('<app>', `one of: ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}`)
    .description('run an iterative Monte Carlo application on an embedded cluster, balanced across threads and nodes (RUPER-LB: Giménez-Alventosa, Moltó, Segrelles)')
    .setting('--iterations <n>', 'iterations (histories, paths) to run (default: the application\'s)', kinds.positiveInt)
    .setting('--nodes <n>', 'embedded nodes', kinds.positiveInt, '1')
    .setting('--workers <n>', 'worker threads per node (default: usable cores / nodes, at least 1)', kinds.positiveInt)
    .setting('--balance <strategy>', 'how iterations are balanced', oneOf(STRATEGIES), 'steal')
    .setting('--seed <n>', 'seed of the iteration-indexed random streams', kinds.count, '1');
  dashboardOption(iterate);
  progressOption(iterate);
  jsonOption(iterate)
    .addHelpText('after', '\nThe result is bit-identical for a given seed and iteration count, whatever the nodes, workers or strategy.\n\nExamples:\n  tidepool iterate slab --iterations 1000000 --nodes 2\n  tidepool iterate option --balance ruper --json')
    .action(async (name: string, flags: IterateFlags) => {
      const app = ITERATIVE_APPLICATIONS[name];
      if (!app) throw new UsageError(`unknown application "${name}": choose one of ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}`);
      const { nodes, seed, balance } = flags;
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes));
      const iterations = flags.iterations ?? app.iterations;
      const place = dashboardPlace(flags.dashboard);
      const progress = Progress.from(flags.progress, flags.json === true);
      if (!flags.json) process.stdout.write(`${app.name}: ${app.describe(app.params)}; ${iterations} ${app.unit} on ${nodes} node(s) × ${workers} worker(s), balance ${balance}\n`);
      const cluster = await workCluster({ nodes, workers, dashboard: place !== null, quiet: true });
      try {
        const run = await withDashboard(cluster.coordination, place, () => runIterativeApplication(app, {
          iterations, nodes, workers, seed, balance, cluster,
          ...(progress.enabled ? { onProgress: (line: string) => progress.update(line) } : {}),
        }));
        progress.end();
        const a = run.answer;
        const sigmas = a.stderr > 0 ? (a.estimate - a.exact) / a.stderr : 0;
        const verified = run.iterations === iterations && Math.abs(sigmas) < 5;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ app: app.name, balance, nodes, workers, seed, iterations: run.iterations, ...a, sigmas, verified, seconds: run.seconds, tally: run.tally })}\n`);
        } else {
          process.stdout.write(`${a.quantity} ${fmt(a.estimate)} ± ${fmt(a.stderr)}; ${a.closedForm} = ${fmt(a.exact)} (${sigmas >= 0 ? '+' : ''}${sigmas.toFixed(2)} σ)${verified ? '' : '  NOT within 5 σ'}\n`);
          process.stdout.write(`${run.iterations} ${app.unit} in ${run.seconds.toFixed(2)} s (${Math.round(run.iterations / run.seconds)} ${app.unit}/s)\n`);
        }
        if (!verified) process.exitCode = 1;
      } finally {
        await cluster.close();
      }
    });
}

const fmt = (x: number) => x.toPrecision(6);
