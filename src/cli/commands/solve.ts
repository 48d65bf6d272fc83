import { APPLICATIONS } from '../../frameworks/search/applications.js';
import { InputError } from '../../frameworks/search/input-error.js';
import { solveOnCluster } from '../../frameworks/search/solve.js';
import type { ScaleStep } from '../../runtime/client/scale-schedule.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { secretForLocalNodesOn } from '../local-nodes.js';
import { clusterSecret, defaultWorkers } from '../options.js';
import { Progress } from '../progress.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds } from '../settings/kinds.js';
import { isRelative, planSizes, type PlanStep } from '../settings/scale-plan.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { workCluster } from '../work-cluster.js';

interface SolveFlags {
  nodes?: number;
  secretFile?: string;
  workers?: number;
  zk?: string;
  timeout: number;
  prune: boolean;
  scale?: PlanStep[];
  poolMemory?: number;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

/** `tidepool solve PROBLEM INPUT`: a parallel branch-and-bound / enumeration run. */
export function registerSolveCommand(program: SettingsCommand): void {
  const solve = program
    .command('solve')
    .argument('<problem>', `one of: ${Object.keys(APPLICATIONS).join(', ')}`)
    .argument('<input>', 'instance file (TSPLIB .tsp, DIMACS .clq, knapsack text), random:N[:SEED] for a random TSP, or n for n-queens')
    .description('solve a search problem in parallel on an embedded cluster, or on a cluster with --zk')
    .setting('--nodes <n>', 'nodes to start: embedded (default 1), or with --zk local node processes joining for this run (default 0)', kinds.count)
    .setting('--workers <n>', 'worker threads per node (default: cores / nodes, at least 1)', kinds.positiveInt)
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble: ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .option('--secret-file <file>', 'with --zk: the cluster secret (or the secret itself in $TIDEPOOL_SECRET), for this client and local node processes; with --nodes or --scale and none given, a fresh random one, if the cluster has no nodes yet')
    .option('--no-prune', 'explore the whole tree (a fixed amount of work, for scalability measurements)')
    .setting('--pool-memory <bytes>', 'memory budget for the tasks one node holds (bytes, each task reckoned at 512 plus its state): a job whose pool would exceed it fails naming the budget instead of running the node out of memory (default: none)', kinds.positiveInt)
    .setting('--scale <plan>', 'change the node count during the run: WHEN:SIZE[,…], e.g. 1s:+2,3s:-2 (add 2 nodes at 1 s, remove 2 at 3 s) or 2s:3 (3 nodes at 2 s)', kinds.timePlan);
  dashboardOption(solve);
  progressOption(solve);
  jsonOption(solve)
    .addHelpText('after', '\nExamples:\n  tidepool solve tsp test/data/tsplib/gr17.tsp --nodes 2\n  tidepool solve nqueens 12 --json\n  tidepool solve tsp random:11:1 --no-prune --scale 1s:+2,3s:-2 --progress\n  tidepool solve tsp test/data/tsplib/gr17.tsp --dashboard')
    .action(async (problem: string, input: string, flags: SolveFlags) => {
      const app = APPLICATIONS[problem];
      if (!app) throw new UsageError(`unknown problem "${problem}": choose one of ${Object.keys(APPLICATIONS).join(', ')}`);
      const zk = flags.zk;
      const nodes = flags.nodes ?? (zk ? 0 : 1);
      if (!zk && nodes < 1) throw new UsageError(`--nodes: "${nodes}" is not a positive whole number (an embedded run needs a node)`);
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / Math.max(1, nodes)));
      const schedule = scaleSteps(flags.scale, zk ? undefined : nodes);
      let instance: never;
      try {
        instance = app.load(input);
      } catch (err) {
        if (err instanceof InputError) throw new UsageError(err.message);
        throw err;
      }
      if (zk && (nodes > 0 || schedule.length > 0)) await secretForLocalNodesOn(zk, flags.secretFile, flags.timeout);
      const secret = zk ? clusterSecret(flags.secretFile) : undefined;
      const place = dashboardPlace(flags.dashboard);
      const progress = Progress.from(flags.progress, flags.json === true);
      if (!flags.json) process.stdout.write(`${app.name}: ${app.describe(instance)}\n`);
      const cluster = await workCluster({ ...(zk ? { zk, secret } : {}), timeout: flags.timeout, nodes, workers, dashboard: place !== null, quiet: true });
      try {
        const { result, stats } = await withDashboard(cluster.coordination, place, () => solveOnCluster(app, instance, {
          cluster, nodes, workers, noPrune: !flags.prune, schedule, ...(zk ? { zk } : {}),
          ...(flags.poolMemory !== undefined ? { poolMemoryBytes: flags.poolMemory } : {}),
          ...(flags.secretFile !== undefined ? { secretFile: flags.secretFile } : {}),
          ...(progress.enabled ? { onProgress: (line: string) => progress.update(line) } : {}),
        }));
        progress.end();
        const report = app.report(instance, result);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ problem: app.name, objective: report.objective, solution: report.solution, verified: report.verified, stats })}\n`);
        } else {
          process.stdout.write(`objective ${report.objective}${report.verified === null ? '' : report.verified ? ' (verified)' : ` (NOT verified: ${report.detail ?? 'recomputed value differs'})`}\n`);
          if (Array.isArray(report.solution)) process.stdout.write(`solution ${report.solution.join(' ')}\n`);
          process.stdout.write(`${stats.seconds.toFixed(2)} s, ${stats.searchNodes} search nodes, ${stats.tasks} tasks, ${stats.steals} steals, ${stats.migrations} migrations, +${stats.nodesJoined}/-${stats.nodesLeft} nodes\n`);
        }
        if (report.verified === false) process.exitCode = 1;
      } finally {
        await cluster.close();
      }
    });
}

/** The plan as the runtime's steps (changes at times); sizes (`2s:3`) need the starting size. */
export function scaleSteps(plan: PlanStep[] | undefined, start: number | undefined): ScaleStep[] {
  if (!plan) return [];
  if (start === undefined) {
    if (!isRelative(plan)) throw new UsageError('--scale: with --zk the job starts on every idle node, so give changes (+N, -N) rather than sizes');
    return plan.map((s) => ({ atMs: s.at, delta: (s.change as { by: number }).by }));
  }
  try {
    return planSizes(plan, start).map(({ step, from, to }) => ({ atMs: step.at, delta: to - from }));
  } catch (err) {
    throw new UsageError(`--scale: ${(err as Error).message}`);
  }
}
