import type { Command } from 'commander';
import { connect } from '../../coord/connect.js';
import { isCoordError } from '../../coord/errors.js';
import { APPLICATIONS } from '../../frameworks/search/applications.js';
import { InputError } from '../../frameworks/search/input-error.js';
import { solveOnCluster } from '../../frameworks/search/solve.js';
import { clusterPaths } from '../../runtime/job-paths.js';
import { parseScaleSchedule } from '../../runtime/scale-schedule.js';
import { UsageError } from '../errors.js';
import { defaultWorkers, nonNegativeInt, positiveInt, secretForLocalNodes, zookeeperConnection } from '../options.js';

interface SolveFlags {
  nodes?: string;
  secretFile?: string;
  workers?: string;
  zk?: string;
  prune: boolean;
  scale?: string;
  json?: boolean;
}

/** `tidepool solve PROBLEM INPUT`: a parallel branch-and-bound / enumeration run. */
export function registerSolveCommand(program: Command): void {
  program
    .command('solve')
    .argument('<problem>', `one of: ${Object.keys(APPLICATIONS).join(', ')}`)
    .argument('<input>', 'instance file (TSPLIB .tsp, DIMACS .clq, knapsack text), random:N[:SEED] for a random TSP, or n for n-queens')
    .description('solve a search problem in parallel on an embedded cluster, or on a cluster with --zk')
    .option('--nodes <n>', 'nodes to start: embedded (default 1), or with --zk local node processes joining for this run (default 0)')
    .option('--workers <n>', 'worker threads per node (default: cores / nodes, at least 1)')
    .option('--zk <conn>', 'run on the cluster registered at this ZooKeeper ensemble')
    .option('--secret-file <file>', 'with --zk and --nodes or --scale: the cluster secret for local node processes (or the secret itself in $TIDEPOOL_SECRET); without one they get a fresh random secret, if the cluster has no other nodes')
    .option('--no-prune', 'explore the whole tree (a fixed amount of work, for scalability measurements)')
    .option('--scale <schedule>', 'change the node count during the run, e.g. 2s:+2,5s:-2')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExamples:\n  tidepool solve tsp test/data/tsplib/gr17.tsp --nodes 2\n  tidepool solve nqueens 12 --json\n  tidepool solve tsp random:14:1 --no-prune --scale 1s:+2,3s:-2')
    .action(async (problem: string, input: string, flags: SolveFlags) => {
      const app = APPLICATIONS[problem];
      if (!app) throw new UsageError(`unknown problem "${problem}": choose one of ${Object.keys(APPLICATIONS).join(', ')}`);
      const zk = flags.zk === undefined ? undefined : zookeeperConnection(flags.zk, '');
      const nodes = flags.nodes === undefined ? (zk ? 0 : 1) : zk ? nonNegativeInt(flags.nodes, '--nodes') : positiveInt(flags.nodes, '--nodes');
      const workers = flags.workers === undefined ? Math.max(1, Math.floor(defaultWorkers() / Math.max(1, nodes))) : positiveInt(flags.workers, '--workers');
      if (zk && (nodes > 0 || flags.scale !== undefined) && secretForLocalNodes(flags.secretFile) === 'fresh') await refuseIfNodesRegistered(zk);
      let schedule: ReturnType<typeof parseScaleSchedule> = [];
      if (flags.scale !== undefined) {
        try {
          schedule = parseScaleSchedule(flags.scale);
        } catch (err) {
          throw new UsageError(`--scale: ${(err as Error).message}`);
        }
      }
      let instance: never;
      try {
        instance = app.load(input);
      } catch (err) {
        if (err instanceof InputError) throw new UsageError(err.message);
        throw err;
      }
      const tty = process.stderr.isTTY && !flags.json;
      if (!flags.json) process.stdout.write(`${app.name}: ${app.describe(instance)}\n`);
      const { result, stats } = await solveOnCluster(app, instance, {
        nodes, workers, noPrune: !flags.prune, schedule, ...(zk ? { zk } : {}),
        ...(flags.secretFile !== undefined ? { secretFile: flags.secretFile } : {}),
        ...(tty ? { onProgress: (line: string) => process.stderr.write(`\r${line}   `) } : {}),
      });
      if (tty) process.stderr.write('\n');
      const report = app.report(instance, result);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ problem: app.name, objective: report.objective, solution: report.solution, verified: report.verified, stats })}\n`);
      } else {
        process.stdout.write(`objective ${report.objective}${report.verified === null ? '' : report.verified ? ' (verified)' : ` (NOT verified: ${report.detail ?? 'recomputed value differs'})`}\n`);
        if (Array.isArray(report.solution)) process.stdout.write(`solution ${report.solution.join(' ')}\n`);
        process.stdout.write(`${stats.seconds.toFixed(2)} s, ${stats.searchNodes} search nodes, ${stats.tasks} tasks, ${stats.steals} steals, ${stats.migrations} migrations, +${stats.nodesJoined}/-${stats.nodesLeft} nodes\n`);
      }
      if (report.verified === false) process.exitCode = 1;
    });
}

/**
 * Local node processes with a fresh secret cannot authenticate to nodes already registered (each cluster
 * shares one secret), and the job would take those nodes too: ask for the cluster's secret instead.
 */
async function refuseIfNodesRegistered(zk: string): Promise<void> {
  const client = await connect(zk);
  try {
    const nodes = await client.getChildren(clusterPaths().nodes).catch((err: unknown) => (isCoordError(err, 'NO_NODE') ? [] : Promise.reject(err)));
    if (nodes.length > 0) {
      throw new UsageError(`${zk} already has ${nodes.length} node(s), which use the cluster's secret: --secret-file (or TIDEPOOL_SECRET) is needed to start local node processes with --zk`);
    }
  } finally {
    await client.close();
  }
}
