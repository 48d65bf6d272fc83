import { MALLEABLE_APPS } from '../../frameworks/malleable/applications.js';
import type { GridResult } from '../../frameworks/malleable/apps/grid-blocks.js';
import { loadMalleableApp } from '../../frameworks/malleable/malleable-app.js';
import type { MalleableRuntimeOptions, RescaleAck } from '../../frameworks/malleable/runtime-options.js';
import { runSequential } from '../../frameworks/malleable/sequential.js';
import { malleableProgress, submitMalleable } from '../../frameworks/malleable/submit.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { Progress } from '../progress.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds, oneOf } from '../settings/kinds.js';
import { planSizes, type PlanStep } from '../settings/scale-plan.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { workCluster } from '../work-cluster.js';

interface RunFlags {
  grid: number;
  blocks: number;
  iterations: number;
  nodes: number;
  scale?: PlanStep[];
  checkpointEvery?: number;
  strategy: 'refine' | 'greedy';
  check?: boolean;
  zk?: string;
  timeout: number;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

function describeRescale(r: RescaleAck, from: number): string {
  const p = r.phases;
  return `${r.kind} ${from}→${r.nodes.length} at iteration ${r.iteration}: ${r.tRescaleMs.toFixed(1)} ms (lb ${p.lb.toFixed(1)}, checkpoint ${p.checkpoint.toFixed(1)}, reconnect ${p.reconnect.toFixed(1)}, restore ${p.restore.toFixed(1)})`;
}

/** `--rescale-at 60:2 120:4` (before plans had one grammar) → `60it:2,120it:4`. */
function fromRescaleAt(value: unknown): string {
  return (value as string[]).map((step) => step.replace(/^(\d+):/, '$1it:')).join(',');
}

/**
 * `tidepool malleable run stencil|wave`: an iterative application on an embedded cluster (or --zk),
 * rescaled at iteration boundaries (after "Towards Realizing the Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé).
 */
export function registerMalleableCommand(program: SettingsCommand): void {
  const malleable = program.command('malleable').description('malleable iterative applications: shrink and expand at iteration boundaries (see docs/malleable.md; after "Towards Realizing the Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé)');
  const run = malleable
    .command('run')
    .argument('<app>', `one of: ${Object.keys(MALLEABLE_APPS).join(', ')}`)
    .description('run a malleable application on an embedded cluster (or on the cluster at --zk), rescaling it at chosen iterations')
    .setting('--grid <n>', 'cells per side of the grid', kinds.positiveInt, '512')
    .setting('--blocks <n>', 'blocks (objects) per side', kinds.positiveInt, '8')
    .setting('--iterations <n>', 'iterations', kinds.count, '100')
    .setting('--nodes <n>', 'nodes to start the job on', kinds.positiveInt, '2')
    .setting('--scale <plan>', 'rescale at iteration boundaries: WHEN:SIZE[,…], e.g. 60it:2,120it:4 (2 nodes from iteration 60, 4 from 120) or 60it:-1', kinds.iterationPlan)
    .deprecatedFlag('--rescale-at <iter:nodes...>', 'scale', fromRescaleAt)
    .setting('--checkpoint-every <n>', 'coordinated checkpoint every N iterations (default: only at rescales)', kinds.positiveInt)
    .setting('--strategy <name>', 'load balancing', oneOf(['refine', 'greedy']), 'refine')
    .option('--check', 'also run the application sequentially here and compare the results bit for bit')
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble instead of an embedded one: ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT);
  dashboardOption(run);
  progressOption(run);
  jsonOption(run)
    .addHelpText('after', `
Old flag: --rescale-at ITER:N … (now --scale ITERit:N,…; it still works, with a note, for one release).

Examples:
  tidepool malleable run stencil --grid 256 --iterations 60 --nodes 4 --scale 20it:2,40it:4 --check
  tidepool malleable run wave --grid 256 --blocks 4 --check --json`)
    .action(async (name: string, flags: RunFlags) => {
      const ref = MALLEABLE_APPS[name];
      if (!ref) throw new UsageError(`unknown application "${name}": choose one of ${Object.keys(MALLEABLE_APPS).join(', ')}`);
      const params = { grid: flags.grid, blocks: flags.blocks, iterations: flags.iterations };
      const { nodes } = flags;
      let rescaleAt: Array<{ iteration: number; nodes: number }>;
      try {
        rescaleAt = planSizes(flags.scale ?? [], nodes).map(({ step, to }) => ({ iteration: step.at, nodes: to }));
      } catch (err) {
        throw new UsageError(`--scale: ${(err as Error).message}`);
      }
      for (const r of rescaleAt) if (r.iteration >= params.iterations) throw new UsageError(`--scale: iteration ${r.iteration} is not before the last (${params.iterations} iterations)`);
      const app = await loadMalleableApp(ref);
      const wrong = app.validate?.(params);
      if (wrong) throw new UsageError(`${name}: ${wrong.replace(/"(grid|blocks|iterations)"/, '--$1')}`);
      const runtime: MalleableRuntimeOptions = { strategy: flags.strategy, rescaleAt, ...(flags.checkpointEvery !== undefined ? { checkpointEvery: flags.checkpointEvery } : {}) };
      const size = Math.max(nodes, ...rescaleAt.map((r) => r.nodes));
      const place = dashboardPlace(flags.dashboard);
      const cluster = await workCluster({ ...(flags.zk ? { zk: flags.zk } : {}), timeout: flags.timeout, nodes: size, workers: 1, dashboard: place !== null, quiet: true });
      const progress = Progress.from(flags.progress, flags.json === true);
      let timer: NodeJS.Timeout | undefined;
      try {
        const started = Date.now();
        const { result, stats } = await withDashboard(cluster.coordination, place, async () => {
          const job = await submitMalleable<GridResult>(cluster, ref, params, { nodes, maxNodes: size, runtime });
          if (!flags.json) process.stdout.write(`${app.name}: ${params.grid}² grid in ${params.blocks}² blocks, ${params.iterations} iterations, job ${job.id} on ${nodes} node(s)\n`);
          if (progress.enabled) {
            timer = setInterval(() => {
              malleableProgress(cluster.coordination, job.id, 5_000)
                .then((p) => progress.update(`iteration ${p.iteration}/${p.iterations} on ${p.nodes.length} node(s)`))
                .catch(() => undefined);
            }, 500);
          }
          return job.result();
        });
        clearInterval(timer);
        progress.end();
        const seconds = (Date.now() - started) / 1000;
        const verified = flags.check ? runSequential<GridResult>(app, params).checksum === result.checksum : null;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ app: app.name, params, result, verified, seconds, stats })}\n`);
        } else {
          let from = nodes;
          for (const r of stats.rescales) {
            process.stdout.write(`${describeRescale(r, from)}\n`);
            from = r.nodes.length;
          }
          process.stdout.write(`checksum ${result.checksum}${verified === null ? '' : verified ? ' (bit-identical to the sequential run)' : ' (DIFFERS from the sequential run)'}\n`);
          process.stdout.write(`sum ${result.sum}; ${seconds.toFixed(2)} s, ${stats.rescales.length} rescale(s), ${stats.checkpoints} checkpoint(s), ${stats.rollbacks} rollback(s)\n`);
        }
        if (verified === false) process.exitCode = 1;
      } finally {
        clearInterval(timer);
        await cluster.close();
      }
    });
}
