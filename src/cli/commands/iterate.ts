import type { Answer, IterativeApplication } from '../../frameworks/iterative/apps/applications.js';
import { ITERATIVE_APPLICATIONS } from '../../frameworks/iterative/apps/applications.js';
import { DEFAULT_RUPER } from '../../frameworks/iterative/balance/ruper-task.js';
import { STRATEGIES, type BalanceStrategy, type IterativeResult } from '../../frameworks/iterative/iterative-types.js';
import { runIterativeJob } from '../../frameworks/iterative/run-application.js';
import { iterativeInput } from '../../frameworks/iterative/run-iterative.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { secretForLocalNodesOn } from '../local-nodes.js';
import { clusterSecret, defaultWorkers } from '../options.js';
import { Progress } from '../progress.js';
import { formatDuration } from '../settings/durations.js';
import { DEFAULT_TIMEOUT, ZK_HELP, duration, kinds, oneOf, type ValueKind } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { MODULE_ON_NODES, shipsModule, workCluster } from '../work-cluster.js';
import { builtinParams, givenParams, givenTasks, iterativeApplication, seedKind } from './iterate-input.js';

interface IterateFlags {
  iterations?: number;
  tasks?: string;
  input?: string;
  param?: string[];
  nodes?: number;
  workers?: number;
  zk?: string;
  timeout: number;
  secretFile?: string;
  balance: BalanceStrategy;
  seed: bigint;
  checkpointInterval: number;
  minRemaining: number;
  maxDeviation: number;
  blockSize?: number;
  chunkSize?: number;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

const positiveNumber: ValueKind = { schema: { type: 'number', exclusiveMinimum: 0 }, what: 'a number > 0' };

const EXAMPLES = `
Examples:
  tidepool iterate slab --iterations 1000000 --nodes 2
  tidepool iterate option --balance ruper --checkpoint-interval 500ms --min-remaining 100ms --json
  tidepool iterate slab --param thickness=3 --param albedo=0.5 --iterations 200000 --seed 18446744073709551615
  tidepool iterate slab --balance ruper --tasks '[{"name":"thin","iterations":300000,"params":{"thickness":1}},{"name":"thick","iterations":300000,"params":{"thickness":4}}]'
  tidepool iterate examples/iterative/buffon.js --iterations 200000 --input '{"needleLength":1,"lineSpacing":2}' --balance ruper --block-size 1000
  tidepool iterate slab --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --nodes 2 --workers 1 --balance ruper --json`;

/** `tidepool iterate APP`: an iterative job balanced across threads and nodes; the built-in ones checked against their closed forms. */
export function registerIterateCommand(program: SettingsCommand): void {
  const iterate = program
    .command('iterate')
    .argument('<app>', `one of ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}, or a module exporting an iterative application (defineIterative): MODULE[#EXPORT], a file relative to the current directory or a package`)
    .description('run an iterative application on an embedded cluster, or on a cluster with --zk, balanced across threads and nodes (RUPER-LB: Giménez-Alventosa, Moltó, Segrelles)')
    .setting('--iterations <n>', 'iterations (histories, paths) to run (default: a built-in application\'s own; with --tasks, their sum)', kinds.positiveInt)
    .setting('--tasks <json>', 'several tasks in one job, as RUPER-LB\'s processes run one per source: a JSON array of {"name"?, "iterations", "params"?}, or @FILE holding it', kinds.text)
    .setting('--input <json>', 'the application\'s parameters: a JSON object, or @FILE holding it (a built-in application\'s are merged over its defaults)', kinds.text)
    .option('--param <key=value...>', 'a parameter over --input (repeatable): VALUE is JSON when it parses, else text; a.b=1 sets b inside a')
    .setting('--nodes <n>', 'nodes to start: embedded (default 1), or with --zk local node processes joining for this run (default 0)', kinds.count)
    .setting('--workers <n>', 'worker threads per node (default: usable cores / nodes, at least 1)', kinds.positiveInt)
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble (the job takes every idle node): ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .option('--secret-file <file>', 'with --zk: the cluster secret (or the secret itself in $TIDEPOOL_SECRET), for this client and local node processes; with --nodes and none given, a fresh random one, if the cluster has no nodes yet')
    .setting('--balance <strategy>', 'how iterations are balanced: ruper (RUPER-LB), steal (work stealing) or static', oneOf(STRATEGIES), 'steal')
    .setting('--seed <n>', 'seed of the iteration-indexed random streams, 0 to 2^64 − 1', seedKind, '1')
    .setting('--checkpoint-interval <duration>', 'ruper: Δt_pc, the time between checkpoints (and the longest report interval)', duration(undefined, true), formatDuration(DEFAULT_RUPER.checkpointInterval * 1000))
    .setting('--min-remaining <duration>', 'ruper: t_min, below this predicted remaining time the assignments are left as they are', duration(undefined, true), formatDuration(DEFAULT_RUPER.minRemaining * 1000))
    .setting('--max-deviation <x>', 'ruper: ds_max, the speed deviation (a fraction) that leaves a report interval as it is', positiveNumber, String(DEFAULT_RUPER.maxDeviation))
    .setting('--block-size <n>', 'iterations per block, the unit that moves between threads and nodes (default: iterations / 512, rounded up)', kinds.positiveInt)
    .setting('--chunk-size <n>', 'iterations per call of the application\'s iterate (default: the block size, at most 1024)', kinds.positiveInt);
  dashboardOption(iterate);
  progressOption(iterate);
  jsonOption(iterate)
    .addHelpText('after', `
The result is bit-identical for a given seed, iteration count and block size, whatever the nodes, workers or strategy.
${MODULE_ON_NODES}
${EXAMPLES}`)
    .action(async (name: string, flags: IterateFlags) => {
      const { builtin, ref } = await iterativeApplication(name);
      const given = givenParams(flags.input, flags.param);
      const givenTaskList = flags.tasks === undefined ? undefined : givenTasks(flags.tasks);
      const { params, tasks } = builtin ? builtinParams(builtin, given, givenTaskList) : { params: given, tasks: givenTaskList };
      const iterations = tasks ? tasks.reduce((sum, t) => sum + t.iterations, 0) : flags.iterations ?? builtin?.iterations;
      if (iterations === undefined) throw new UsageError(`--iterations is required for a module (${name})`);
      if (tasks && flags.iterations !== undefined && flags.iterations !== iterations) throw new UsageError(`--iterations (${flags.iterations}) is not the sum of the --tasks' iterations (${iterations}): leave it out`);
      const zk = flags.zk;
      const nodes = flags.nodes ?? (zk ? 0 : 1);
      if (!zk && nodes < 1) throw new UsageError(`--nodes: "${nodes}" is not a positive whole number (an embedded run needs a node)`);
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / Math.max(1, nodes)));
      const options = {
        ...(tasks ? { tasks } : { iterations }), ...(params !== undefined ? { params } : {}),
        balance: flags.balance, seed: flags.seed,
        ruper: { checkpointInterval: flags.checkpointInterval / 1000, minRemaining: flags.minRemaining / 1000, maxDeviation: flags.maxDeviation },
        ...(flags.blockSize !== undefined ? { blockSize: flags.blockSize } : {}), ...(flags.chunkSize !== undefined ? { chunkSize: flags.chunkSize } : {}),
      };
      let input;
      try {
        input = iterativeInput(options);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      if (zk && nodes > 0) await secretForLocalNodesOn(zk, flags.secretFile, flags.timeout);
      const secret = zk ? clusterSecret(flags.secretFile) : undefined;
      const place = dashboardPlace(flags.dashboard);
      const progress = Progress.from(flags.progress, flags.json === true);
      const where = zk ? `the cluster at ${zk}${nodes > 0 ? ` with ${nodes} local node process(es) × ${workers} worker(s)` : ''}` : `${nodes} node(s) × ${workers} worker(s)`;
      const what = builtin ? `${builtin.name}: ${builtin.describe(params)}` : `${ref.module}${ref.export === 'default' ? '' : `#${ref.export}`}`;
      if (!flags.json) process.stdout.write(`${what}; ${iterations} ${builtin?.unit ?? 'iterations'}${tasks ? ` in ${tasks.length} tasks` : ''} on ${where}, balance ${flags.balance}\n`);
      const cluster = await workCluster({ ...(zk ? { zk, secret, serveData: shipsModule(ref.module) } : {}), timeout: flags.timeout, nodes, workers, dashboard: place !== null, quiet: true });
      try {
        const run = await withDashboard(cluster.coordination, place, () => runIterativeJob({
          ref, options, unit: builtin?.unit ?? 'iterations', nodes, workers, cluster,
          ...(zk ? { zk } : {}), ...(flags.secretFile !== undefined ? { secretFile: flags.secretFile } : {}),
          ...(progress.enabled ? { onProgress: (line: string) => progress.update(line) } : {}),
        }));
        progress.end();
        const report: RunReport = {
          balance: flags.balance, nodes, workers, seed: input.seed, blockSize: input.blockSize, chunkSize: input.chunkSize, blocks: run.result.blocks,
          ...(flags.balance === 'ruper' ? { ruper: input.ruper } : {}), seconds: run.seconds,
        };
        const verified = builtin ? printChecked(builtin, params, tasks?.map((t) => t.params), run.result, iterations, report, flags.json === true) : printValue(what, run.result, report, flags.json === true);
        if (!verified) process.exitCode = 1;
      } finally {
        await cluster.close();
      }
    });
}

/** How the job ran, as --json prints it: the settings it ran with (seed as a decimal string: it may exceed 2^53) and its time. */
interface RunReport {
  balance: BalanceStrategy;
  nodes: number;
  workers: number;
  seed: string;
  blockSize: number;
  chunkSize: number;
  blocks: number;
  ruper?: { checkpointInterval: number; minRemaining: number; maxDeviation: number };
  seconds: number;
}

/** A built-in application's answer (per task, with tasks) against its closed form; false if any is more than 5 σ off or an iteration is missing. */
function printChecked(app: IterativeApplication, params: unknown, taskParams: unknown[] | undefined, r: IterativeResult<unknown>, iterations: number, report: RunReport, json: boolean): boolean {
  const check = (p: unknown, tally: unknown, n: number, expected: number) => {
    const a = app.answer(p, tally);
    const sigmas = a.stderr > 0 ? (a.estimate - a.exact) / a.stderr : 0;
    return { answer: a, sigmas, verified: n === expected && Math.abs(sigmas) < 5 };
  };
  const whole = check(params, r.value, r.iterations, iterations);
  const tasks = r.tasks?.map((t, k) => ({ name: t.name, iterations: t.iterations, ...check(taskParams![k], t.value, t.iterations, t.iterations) }));
  const verified = tasks ? tasks.every((t) => t.verified) && r.iterations === iterations : whole.verified;
  if (json) {
    const taskJson = tasks?.map((t, k) => ({ name: t.name, iterations: t.iterations, ...t.answer, sigmas: t.sigmas, verified: t.verified, tally: r.tasks![k]!.value }));
    const main = tasks ? {} : { ...whole.answer, sigmas: whole.sigmas };
    process.stdout.write(`${JSON.stringify({ app: app.name, ...report, iterations: r.iterations, ...main, verified, ...(taskJson ? { tasks: taskJson } : { tally: r.value }) })}\n`);
    return verified;
  }
  const line = (a: Answer, sigmas: number, ok: boolean) => `${a.quantity} ${fmt(a.estimate)} ± ${fmt(a.stderr)}; ${a.closedForm} = ${fmt(a.exact)} (${sigmas >= 0 ? '+' : ''}${sigmas.toFixed(2)} σ)${ok ? '' : '  NOT within 5 σ'}`;
  if (tasks) for (const t of tasks) process.stdout.write(`${t.name} (${t.iterations} ${app.unit}): ${line(t.answer, t.sigmas, t.verified)}\n`);
  else process.stdout.write(`${line(whole.answer, whole.sigmas, whole.verified)}\n`);
  process.stdout.write(`${r.iterations} ${app.unit} in ${report.seconds.toFixed(2)} s (${Math.round(r.iterations / report.seconds)} ${app.unit}/s)\n`);
  return verified;
}

/** A module's result: its tally (per task, with tasks), as JSON. Nothing to check it against: verified when every iteration counted. */
function printValue(what: string, r: IterativeResult<unknown>, report: RunReport, json: boolean): boolean {
  if (json) {
    process.stdout.write(`${JSON.stringify({ app: what, ...report, iterations: r.iterations, value: r.value, ...(r.tasks ? { tasks: r.tasks } : {}) })}\n`);
  } else {
    if (r.tasks) for (const t of r.tasks) process.stdout.write(`${t.name} (${t.iterations} iterations): ${JSON.stringify(t.value)}\n`);
    else process.stdout.write(`result ${JSON.stringify(r.value)}\n`);
    process.stdout.write(`${r.iterations} iterations in ${report.seconds.toFixed(2)} s (${Math.round(r.iterations / report.seconds)}/s)\n`);
  }
  return true;
}

const fmt = (x: number) => x.toPrecision(6);
