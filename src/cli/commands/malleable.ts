import { MALLEABLE_APP_DEFAULTS, MALLEABLE_APPS } from '../../frameworks/malleable/applications.js';
import type { MalleableRuntimeOptions, RescaleAck } from '../../frameworks/malleable/runtime-options.js';
import { runSequential } from '../../frameworks/malleable/sequential.js';
import { malleableProgress, submitMalleable } from '../../frameworks/malleable/submit.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers, SECRET_FILE_TO_WRITE } from '../options.js';
import { Progress } from '../progress.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds, oneOf } from '../settings/kinds.js';
import { planSizes, type PlanStep } from '../settings/scale-plan.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { MODULE_ON_NODES, shipsModule, workCluster } from '../work-cluster.js';
import { givenParams } from './iterate-input.js';
import { checkParams, malleableApplication } from './malleable-input.js';

interface RunFlags {
  input?: string;
  param?: string[];
  grid?: number;
  blocks?: number;
  iterations?: number;
  nodes: number;
  workers?: number;
  scale?: PlanStep[];
  checkpointEvery?: number;
  lbEvery?: number;
  syncEvery?: number;
  strategy: 'refine' | 'greedy';
  check?: boolean;
  zk?: string;
  timeout: number;
  secretFile?: string;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

/** The applications whose parameters --grid, --blocks and --iterations set. */
const GRID_APPS = new Set(['stencil', 'wave']);

function describeRescale(r: RescaleAck, from: number): string {
  const p = r.phases;
  return `${r.kind} ${from}→${r.nodes.length} at iteration ${r.iteration}: ${r.tRescaleMs.toFixed(1)} ms (lb ${p.lb.toFixed(1)}, checkpoint ${p.checkpoint.toFixed(1)}, reconnect ${p.reconnect.toFixed(1)}, restore ${p.restore.toFixed(1)})`;
}

/** `--rescale-at 60:2 120:4` (before plans had one grammar) → `60it:2,120it:4`. */
function fromRescaleAt(value: unknown): string {
  return (value as string[]).map((step) => step.replace(/^(\d+):/, '$1it:')).join(',');
}

/** A result for a terminal: its checksum when it has one, else its JSON (cut short). */
function describeResult(result: unknown): string {
  const checksum = (result as { checksum?: unknown } | null)?.checksum;
  if (typeof checksum === 'string') return `checksum ${checksum}`;
  const json = JSON.stringify(result);
  return `result ${json.length > 400 ? `${json.slice(0, 400)}… (--json prints it whole)` : json}`;
}

/**
 * `tidepool malleable run APP`: a built-in application or a user's module on an embedded cluster (or
 * --zk), rescaled at iteration boundaries (after "Towards Realizing the Potential of Malleable Jobs",
 * Gupta, Acun, Sarood, Kalé).
 */
export function registerMalleableCommand(program: SettingsCommand): void {
  const malleable = program.command('malleable').description('malleable iterative applications: shrink and expand at iteration boundaries (see docs/malleable.md; after "Towards Realizing the Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé)');
  const run = malleable
    .command('run')
    .argument('<app>', `one of ${Object.keys(MALLEABLE_APPS).join(', ')}, or a module exporting a malleable application (defineMalleable): MODULE[#EXPORT], a file relative to the current directory or a package`)
    .description('run a malleable application on an embedded cluster (or on the cluster at --zk), rescaling it at chosen iterations')
    .setting('--input <json>', 'the application\'s parameters: a JSON object, or @FILE holding it (a built-in application\'s are merged over its defaults)', kinds.text)
    .option('--param <key=value...>', 'a parameter over --input (repeatable): VALUE is JSON when it parses, else text; a.b=1 sets b inside a')
    .setting('--grid <n>', 'stencil, wave: cells per side of the grid (default 512)', kinds.positiveInt)
    .setting('--blocks <n>', 'stencil, wave: blocks (objects) per side (default 8)', kinds.positiveInt)
    .setting('--iterations <n>', 'stencil, wave: iterations (default 100)', kinds.count)
    .setting('--nodes <n>', 'nodes to start the job on', kinds.positiveInt, '2')
    .setting('--workers <n>', 'object threads per node, over which the objects are balanced: the worker threads of each embedded node (default: usable cores / nodes, at least 1); with --zk, at most this many of each node\'s worker threads (default: all of them)', kinds.positiveInt)
    .setting('--scale <plan>', 'rescale at iteration boundaries: WHEN:SIZE[,…], e.g. 60it:2,120it:4 (2 nodes from iteration 60, 4 from 120) or 60it:-1', kinds.iterationPlan)
    .deprecatedFlag('--rescale-at <iter:nodes...>', 'scale', fromRescaleAt)
    .setting('--checkpoint-every <n>', 'coordinated checkpoint every N iterations (default: only at rescales)', kinds.positiveInt)
    .setting('--lb-every <n>', 'balance the objects over the nodes by their measured loads every N iterations (default: only at rescales)', kinds.positiveInt)
    .setting('--sync-every <n>', 'iterations between synchronization points, where requests, balancing and checkpoints take place (default 1)', kinds.positiveInt)
    .setting('--strategy <name>', 'load balancing', oneOf(['refine', 'greedy']), 'refine')
    .option('--check', 'also run the application sequentially here and compare the results bit for bit')
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble instead of an embedded one: ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .option('--secret-file <file>', `with --zk: ${SECRET_FILE_TO_WRITE}`);
  dashboardOption(run);
  progressOption(run);
  jsonOption(run)
    .addHelpText('after', `
${MODULE_ON_NODES}
Old flag: --rescale-at ITER:N … (now --scale ITERit:N,…; it still works, with a note, for one release).

Examples:
  tidepool malleable run stencil --grid 256 --iterations 60 --nodes 4 --scale 20it:2,40it:4 --check
  tidepool malleable run stencil --grid 1024 --iterations 100 --nodes 1 --workers 2 --sync-every 10 --check
  tidepool malleable run wave --grid 256 --blocks 4 --check --json
  tidepool malleable run lulesh --param elements=20000 --param steps=100 --nodes 2 --scale 100it:1 --lb-every 20 --check
  tidepool malleable run leanmd --input '{"cells":[3,3,3],"atomsPerSide":2,"steps":10}' --nodes 3 --scale 9it:2 --sync-every 3 --json
  tidepool malleable run examples/malleable/heat.js --input '{"cells":2000,"segments":16,"loss":0.1,"tol":1e-9,"iterations":5000}' --nodes 2 --lb-every 50 --scale 40it:1 --check`)
    .action(async (name: string, flags: RunFlags) => {
      const given = await malleableApplication(name, 'APP');
      const gridFlags = { grid: flags.grid, blocks: flags.blocks, iterations: flags.iterations };
      const gridGiven = Object.entries(gridFlags).filter(([, v]) => v !== undefined);
      if (gridGiven.length > 0 && !GRID_APPS.has(given.builtin ?? '')) {
        throw new UsageError(`--${gridGiven[0]![0]} is a parameter of stencil and wave: give ${given.app.name}'s parameters with --input or --param`);
      }
      const params = { ...(given.builtin ? MALLEABLE_APP_DEFAULTS[given.builtin] : {}), ...givenParams(flags.input, flags.param), ...Object.fromEntries(gridGiven) };
      try {
        checkParams(given, params, flags.input === undefined && !flags.param?.length ? 'parameters' : '--input/--param');
      } catch (err) {
        // Stencil's and Wave's own flags: name the flag, not the field.
        throw GRID_APPS.has(given.builtin ?? '') ? new UsageError((err as Error).message.replace(/^.*?: \w+: "(grid|blocks|iterations)"/, '--$1')) : err;
      }
      const iterations = given.app.iterations(params);
      const { nodes } = flags;
      let rescaleAt: Array<{ iteration: number; nodes: number }>;
      try {
        rescaleAt = planSizes(flags.scale ?? [], nodes).map(({ step, to }) => ({ iteration: step.at, nodes: to }));
      } catch (err) {
        throw new UsageError(`--scale: ${(err as Error).message}`);
      }
      for (const r of rescaleAt) if (r.iteration >= iterations) throw new UsageError(`--scale: iteration ${r.iteration} is not before the last (${iterations} iterations)`);
      const runtime: MalleableRuntimeOptions = {
        strategy: flags.strategy, rescaleAt,
        ...(flags.workers !== undefined ? { workers: flags.workers } : {}),
        ...(flags.checkpointEvery !== undefined ? { checkpointEvery: flags.checkpointEvery } : {}),
        ...(flags.lbEvery !== undefined ? { lbEvery: flags.lbEvery } : {}),
        ...(flags.syncEvery !== undefined ? { syncEvery: flags.syncEvery } : {}),
      };
      const size = Math.max(nodes, ...rescaleAt.map((r) => r.nodes));
      const place = dashboardPlace(flags.dashboard);
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / size));
      const cluster = await workCluster({ ...(flags.zk ? { zk: flags.zk, secret: clusterSecret(flags.secretFile), serveData: shipsModule(given.ref.module) } : {}), timeout: flags.timeout, nodes: size, workers, dashboard: place !== null, quiet: true });
      const progress = Progress.from(flags.progress, flags.json === true);
      let timer: NodeJS.Timeout | undefined;
      try {
        const started = Date.now();
        const { result, stats } = await withDashboard(cluster.coordination, place, async () => {
          const job = await submitMalleable(cluster, given.ref, params, { nodes, maxNodes: size, runtime });
          if (!flags.json) process.stdout.write(`${given.app.name}: ${given.app.objects(params)} objects, ${iterations} iterations, job ${job.id} on ${nodes} node(s)${flags.zk ? '' : ` of ${workers} object thread(s)`}\n`);
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
        // JSON keeps every bit of a double: equal texts, equal results.
        const verified = flags.check ? JSON.stringify(runSequential(given.app, params)) === JSON.stringify(result) : null;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ app: given.app.name, params, result, verified, seconds, stats })}\n`);
        } else {
          let from = nodes;
          for (const r of stats.rescales) {
            process.stdout.write(`${describeRescale(r, from)}\n`);
            from = r.nodes.length;
          }
          process.stdout.write(`${describeResult(result)}${verified === null ? '' : verified ? ' (bit-identical to the sequential run)' : ' (DIFFERS from the sequential run)'}\n`);
          const ran = stats.iterations < iterations ? `, done after ${stats.iterations} of ${iterations} iterations` : '';
          process.stdout.write(`${seconds.toFixed(2)} s, ${stats.rescales.length} rescale(s), ${stats.checkpoints} checkpoint(s), ${stats.rollbacks} rollback(s)${ran}\n`);
        }
        if (verified === false) process.exitCode = 1;
      } finally {
        clearInterval(timer);
        await cluster.close();
      }
    });
}
