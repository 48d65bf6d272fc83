import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { isCoordError } from '../../coord/errors.js';
import type { CoordClient } from '../../coord/types.js';
import { FLEXIBILITIES, type Flexibility } from '../../frameworks/malleable/manager/managed-job.js';
import { managerPaths, submitManagedJob } from '../../frameworks/malleable/manager/manager-store.js';
import { POLICY_NAMES, type PolicyName } from '../../frameworks/malleable/manager/policies.js';
import { followFailureFeed } from '../../frameworks/malleable/manager/failure-feed.js';
import { DEFAULT_COST_FACTOR, DEFAULT_MAX_OVERHEAD } from '../../frameworks/malleable/manager/rescale-cost.js';
import { clearWarning, ResourceManager, warnNode } from '../../frameworks/malleable/manager/resource-manager.js';
import { listNodes } from '../../runtime/scheduler/index.js';
import { log } from '../../util/log.js';
import { Cluster } from '../../runtime/client/cluster.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { dashboardOption, jsonOption, secretOption, zkOptions } from '../common-options.js';
import { DASHBOARD_TICK_MS, dashboardPlace, serveDashboard, type RunningDashboard } from '../dashboard-option.js';
import { connectZk, withZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers } from '../options.js';
import { printLine } from '../output.js';
import { warnOnce } from '../settings/deprecations.js';
import { parseDuration } from '../settings/durations.js';
import { duration, kinds, oneOf, type ValueKind } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';
import { jsonArgument } from './iterate-input.js';
import { managedJobOf } from './managed-job-input.js';
import { TrialJobs } from './manager-trial.js';
import { LiveSpotFeed } from '../../frameworks/malleable/manager/spot-feed-live.js';

interface Common {
  zk: string;
  timeout: number;
  secretFile?: string;
  json?: boolean;
}

interface SubmitFlags extends Common {
  flexibility: Flexibility;
  export: string;
  root: string;
  input?: string;
  jobKind?: string;
  min: number;
  max?: number;
  nodes?: number;
}

const CLUSTER = 'the cluster\'s ZooKeeper ensemble';

/** A share of a job's time, above 0 and at most 1. */
const SHARE: ValueKind = { schema: { type: 'number', exclusiveMinimum: 0, maximum: 1 }, what: 'a number above 0, at most 1' };

interface ManagerFlags extends Common {
  policy: PolicyName;
  tgap: number;
  costFactor: number;
  rescaleOverhead: number;
  backfill?: boolean;
  failureFeed?: string;
  id?: string;
  embedded?: boolean;
  nodes?: number;
  workers?: number;
  jobs?: string;
  dashboard?: boolean | number;
  priceFeed?: string;
  spotNodes?: string[];
  spotThreshold?: number;
  speed?: number;
  notice?: number;
}

/** `tidepool manager|submit`: the resource manager for rigid, moldable and malleable jobs (docs/malleable.md); its jobs are listed by `jobs --managed` and rescaled by `scale`. */
export function registerManagerCommands(program: SettingsCommand): void {
  const manager = jsonOption(secretOption(zkOptions(program.command('manager')
    .description('run the resource manager: place managed jobs on the pool of nodes by a policy, rescaling malleable jobs split-phase (after "Towards Realizing the Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé)'),
  `${CLUSTER} (or --embedded)`), 'write'), 'print one JSON line per event')
    .setting('--policy <name>', 'scheduling policy', oneOf(POLICY_NAMES), 'equipartition')
    .setting('--tgap <duration>', 'equipartition: least time between two rescales of a job (T_gap); it grows to T_rescale / --rescale-overhead for a job whose rescales are slow', duration('s'), '40s')
    .setting('--cost-factor <k>', 'equipartition: propose a rescale only when what it gains over the next T_gap exceeds k × what it costs (|Δnodes| × T_gap > k × nodes × T_rescale; 0: always)', kinds.factor, String(DEFAULT_COST_FACTOR))
    .setting('--rescale-overhead <share>', 'equipartition: the largest share of a job\'s time spent rescaling (T_gap ≥ measured T_rescale / share)', SHARE, String(DEFAULT_MAX_OVERHEAD))
    .option('--backfill', 'start queued jobs whose minimum fits now behind one that does not, when they cannot delay it (equipartition, moldable)')
    .setting('--failure-feed <file>', 'predicted failures, one JSON line each ({"node": ID, "at": TIME} or {"node": ID, "clear": true}), from FILE, a named pipe or - (stdin): each warns or clears a node as `tidepool warn`/`clear` do', kinds.text)
    .setting('--id <id>', 'candidate id in the managers\' election (default: a fresh one)', kinds.text)
    .option('--embedded', 'a one-machine trial: the manager on an embedded cluster of its own (in-process nodes, no ZooKeeper), its jobs from --jobs')
    .setting('--nodes <n>', 'with --embedded: the nodes of its cluster (default 4)', kinds.positiveInt)
    .setting('--workers <n>', 'with --embedded: worker threads per node (default: usable cores / nodes, at least 1)', kinds.positiveInt)
    .setting('--jobs <file>', 'with --embedded: the jobs to queue, one JSON line each as submit takes them ({"app": "stencil", "flexibility": "malleable", "max": 4, "input": {…}, "at": "2s"} or {"module": FILE, "flexibility": "rigid", "nodes": 2, "root": {…}}), from FILE or - (stdin); each one\'s outcome is printed when it ends', kinds.text);
  manager
    .setting('--price-feed <file>', 'a spot price history replayed live, one EC2 price record a line ({"spotPrice": …, "timestamp": …} as the 2010 console export, or describe-spot-price-history\'s {"SpotPrice": …, "Timestamp": …}), from FILE or -: the --spot-nodes run jobs while the price is below --spot-threshold; when it reaches it they are vacated on the interruption notice', kinds.text)
    .setting('--spot-nodes <id...>', 'with --price-feed: the spot nodes (ids as tidepool status lists them)', kinds.list)
    .setting('--spot-threshold <usd>', 'with --price-feed: the price (USD per hour) from which the spot nodes are not kept', kinds.factor)
    .setting('--speed <x>', 'with --price-feed: trace time per real time (3600: an hour of history a second)', kinds.factor, '1')
    .setting('--notice <duration>', 'with --price-feed: the interruption notice in real time (default: EC2\'s 2 minutes of trace time at --speed)', duration('s'));
  dashboardOption(manager);
  manager.addHelpText('after', `
Runs until SIGINT/SIGTERM; several managers may run, one acts (elected). A malformed line of the failure
feed or of --jobs is refused with its file:line and skipped; the manager keeps running. With --embedded
the cluster and the jobs still running end with the manager (they are cancelled).

Examples:
  tidepool manager --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --policy equipartition --tgap 100s --json
  tidepool manager --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --tgap 10s --cost-factor 4 --backfill --failure-feed - --json
  tidepool manager --embedded --nodes 4 --tgap 2s --jobs examples/manager/trial.jsonl --json`);
  manager.action(async (flags: ManagerFlags) => {
    // Listening for SIGTERM before anything is announced: a signal right after the first line must stop us cleanly.
    const stopping = stopSignal();
    checkPlace(flags);
    const feed = flags.failureFeed === undefined ? undefined : await openFeed(flags.failureFeed, '--failure-feed');
    const jobFeed = flags.jobs === undefined ? undefined : await openFeed(flags.jobs, '--jobs').catch((err: unknown) => {
      feed?.input.destroy();
      throw err;
    });
    const priceFeed = flags.priceFeed === undefined ? undefined : await openFeed(flags.priceFeed, '--price-feed').catch((err: unknown) => {
      feed?.input.destroy();
      jobFeed?.input.destroy();
      throw err;
    });
    const closeFeeds = () => [feed, jobFeed, priceFeed].forEach((f) => f?.input.destroy()); // an open stdin or pipe would keep the process alive
    let cluster: Cluster | undefined;
    let client: CoordClient;
    let secret: ClusterSecret;
    try {
      if (flags.embedded) {
        const nodes = flags.nodes ?? 4;
        const given = flags.secretFile !== undefined ? clusterSecret(flags.secretFile) : undefined;
        cluster = await Cluster.embedded({
          nodes, workers: flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes)),
          ...(flags.dashboard !== undefined ? { progressIntervalMs: DASHBOARD_TICK_MS } : {}), ...(given ? { secret: given } : {}),
        });
        [client, secret] = [cluster.coordination, cluster.secret!];
      } else {
        secret = clusterSecret(flags.secretFile);
        client = await connectZk(flags.zk!, flags.timeout, { secret });
      }
    } catch (err) {
      closeFeeds();
      throw err;
    }
    const close = () => (cluster ? cluster.close() : client.close());
    const manager = new ResourceManager(client, {
      id: flags.id ?? `manager-${randomBytes(4).toString('hex')}`, policy: flags.policy, tGapMs: flags.tgap,
      costFactor: flags.costFactor, maxOverhead: flags.rescaleOverhead, backfill: flags.backfill === true,
    });
    manager.on('elected', () => printLine(flags.json, { active: true }, 'manager active'));
    manager.on('event', (e) => printLine(flags.json, e, `${new Date(e.at).toISOString()} ${e.type} ${e.job} → ${e.nodes.length} node(s)${e.tRescaleMs !== undefined ? ` (T_rescale ${e.tRescaleMs} ms)` : ''}`));
    client.onState((s) => {
      if (s !== 'expired') return;
      log.error('manager', 'coordination session expired; exiting (3) for the supervisor to restart us');
      process.exit(3);
    });
    let dashboard: RunningDashboard | undefined;
    try {
      // Spot nodes are kept from jobs until the feed's first price below the threshold, from the first pass on.
      for (const node of flags.priceFeed !== undefined ? flags.spotNodes! : []) await warnNode(client, node);
      await manager.start();
      const place = dashboardPlace(flags.dashboard);
      if (place) dashboard = await serveDashboard(client, place);
    } catch (err) {
      // Refused (another cluster's secret, say): nothing stays open, the command exits with the error.
      closeFeeds();
      await manager.stop().catch(() => undefined);
      await close();
      throw err;
    }
    const where = cluster ? `an embedded cluster of ${flags.nodes ?? 4} node(s)` : flags.zk!;
    printLine(flags.json, {
      ready: true, policy: flags.policy, tGapMs: flags.tgap, costFactor: flags.costFactor, rescaleOverhead: flags.rescaleOverhead, backfill: flags.backfill === true,
      ...(cluster ? { embedded: { nodes: cluster.localNodes().map((n) => n.id).sort() } } : { zk: flags.zk }), ...(dashboard ? { dashboard: dashboard.url } : {}),
    }, `manager ready (${flags.policy}${flags.policy === 'equipartition' ? `, T_gap ${flags.tgap / 1000} s, cost factor ${flags.costFactor}` : ''}${flags.backfill ? ', backfill' : ''}) on ${where}${dashboard ? `; dashboard ${dashboard.url}` : ''}`);
    if (feed) {
      void followFailureFeed(feed.input, feed.name, async (p) => {
        if (p.type === 'clear') await clearWarning(client, p.node);
        else await warnNode(client, p.node, undefined, p.at);
        printLine(flags.json, { feed: feed.name, ...p }, `${feed.name}: ${p.type} ${p.node}${p.type === 'warn' && p.at !== undefined ? ` (failure predicted at ${new Date(p.at).toISOString()})` : ''}`);
      }, (err) => log.error('manager', err.message)).then(
        () => log.info('manager', `failure feed ${feed.name} ended`),
        (err: unknown) => log.error('manager', `failure feed ${feed.name} stopped`, err),
      );
    }
    const trial = jobFeed ? new TrialJobs(client, secret, flags.json) : undefined;
    if (trial && jobFeed) {
      void trial.follow(jobFeed.input, jobFeed.name).then(
        () => log.info('manager', `jobs ${jobFeed.name}: every line read`),
        (err: unknown) => log.error('manager', `jobs ${jobFeed.name} stopped`, err),
      );
    }
    // An embedded cluster holds the process only while work runs: the manager serves until it is stopped.
    const serving = setInterval(() => undefined, 2 ** 30);
    const spot = priceFeed ? await followSpotPrices(client, priceFeed, flags) : undefined;
    log.info('manager', `${await stopping}: stopping`);
    clearInterval(serving);
    spot?.stop();
    closeFeeds();
    await trial?.stop();
    await dashboard?.close();
    await manager.stop();
    await close();
  });

  jsonOption(secretOption(zkOptions(program.command('submit')
    .argument('<module>', 'task module: a file (relative to the current directory; nodes run it only from a location they allow: tidepool node --allow-code) or a package specifier; with --job-kind malleable, a malleable application: stencil, wave, leanmd, lulesh or a module')
    .description('queue a job for the resource manager'), CLUSTER, 'jobs are queued on a cluster registered on ZooKeeper'), 'write'))
    .setting('--flexibility <flexibility>', 'who sizes the job: rigid (its own size), moldable (the manager, once), malleable (the manager, at any time)', oneOf(FLEXIBILITIES))
    .requireSetting('flexibility', 'rigid, moldable or malleable')
    .deprecatedFlag('--kind <flexibility>', 'flexibility')
    .setting('--export <name>', 'the task type\'s export in the module', kinds.text, 'default')
    .setting('--root <json>', 'the root task\'s state as JSON', kinds.text, 'null')
    .setting('--input <json>', 'the job\'s input, as its kind takes it: a JSON value, or @FILE holding it (the task pool: data every task reads; malleable: {"params": {…}, "runtime": {…}})', kinds.text)
    .setting('--job-kind <kind>', 'the job kind that runs it: malleable (a malleable application), or MODULE#EXPORT of one\'s own (default: the task pool)', kinds.text)
    .setting('--min <n>', 'fewest nodes the job runs on', kinds.positiveInt, '1')
    .setting('--max <n>', 'most nodes the job may have (default: no limit; rigid: its size)', kinds.positiveInt)
    .setting('--nodes <n>', 'requested size (a rigid job\'s size; default --min)', kinds.positiveInt)
    .addHelpText('after', `
Warns when no resource manager (tidepool manager) is running: the job waits in the queue until one does.
Old flag: --kind (now --flexibility; it still works, with a note, for one release).

Examples:
  tidepool submit examples/count.js --flexibility malleable --min 1 --max 2 --root '{"n":200000}' --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret
  tidepool submit examples/count.js --flexibility rigid --nodes 1 --root '{"n":200000}' --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json
  tidepool submit stencil --job-kind malleable --flexibility malleable --min 1 --max 2 --input '{"params":{"grid":256,"blocks":4,"iterations":200},"runtime":{"checkpointEvery":50}}' --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret
  tidepool submit examples/malleable/heat.js --job-kind malleable --flexibility moldable --max 2 --input '{"params":{"cells":2000,"segments":16,"loss":0.1,"tol":1e-9,"iterations":5000}}' --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json`)
    .action(async (module: string, flags: SubmitFlags) => {
      const { flexibility, min, max, nodes } = flags;
      if (max !== undefined && max < min) throw new UsageError(`--max (${max}) is below --min (${min})`);
      if (nodes !== undefined && (nodes < min || (max !== undefined && nodes > max)) && flexibility !== 'rigid') throw new UsageError(`--nodes (${nodes}) must lie between --min and --max`);
      let root: unknown;
      try {
        root = JSON.parse(flags.root);
      } catch (err) {
        throw new UsageError(`--root: not JSON (${(err as Error).message})`);
      }
      const input = flags.input === undefined ? undefined : jsonArgument(flags.input, '--input');
      const job = await managedJobOf({ module, export: flags.export, root, input, ...(flags.jobKind !== undefined ? { jobKind: flags.jobKind } : {}) }, { module: 'MODULE', input: '--input', jobKind: '--job-kind' });
      const secret = clusterSecret(flags.secretFile);
      return withZk(flags.zk, flags.timeout, secret, async (client) => {
        let spec;
        try {
          spec = await submitManagedJob(client, {
            ...job, flexibility, minNodes: min, secret, ...(max !== undefined ? { maxNodes: max } : {}), ...(nodes !== undefined ? { nodes } : {}),
          });
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        if (!(await managerRunning(client))) warnOnce(`no resource manager is running on ${flags.zk}: job ${spec.id} waits in the queue until one starts (tidepool manager --zk ${flags.zk})`);
        printLine(flags.json, { job: spec.id, flexibility, minNodes: spec.nodes.min, maxNodes: spec.nodes.max ?? null, nodes: spec.nodes.requested }, `job ${spec.id} queued (${flexibility})`);
      });
    });

  jsonOption(secretOption(zkOptions(program.command('warn')
    .argument('<node>', 'node id (as tidepool status lists it)')
    .description('predict a failure of a node: the resource manager moves every malleable job off it at once and gives it to no job until `tidepool clear NODE` (proactive fault tolerance)'), CLUSTER, 'the warning is kept on the cluster\'s ZooKeeper'), 'write'))
    .setting('--at <time>', 'when the failure is predicted: an ISO 8601 time (2026-11-28T02:00:00Z) or a duration from now (10m); recorded with the warning', kinds.text)
    .addHelpText('after', `
The manager acts on the warning at once, whatever the predicted time. A job that is not malleable
cannot leave the node and is left to crash recovery. A stream of predictions: tidepool manager --failure-feed.

Examples:
  tidepool warn NODE --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --at 10m
  tidepool warn NODE --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --at 2026-11-28T02:00:00Z --json
  tidepool clear NODE --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret`)
    .action((node: string, flags: Common & { at?: string }) => {
      const at = flags.at === undefined ? undefined : predictedTime(flags.at);
      return withZk(flags.zk, flags.timeout, clusterSecret(flags.secretFile), async (client) => {
        if (!(await listNodes(client)).some((n) => n.id === node)) throw new UsageError(`no node ${node} in the cluster (tidepool status lists them)`);
        await warnNode(client, node, undefined, at);
        if (!(await managerRunning(client))) warnOnce(`no resource manager is running on ${flags.zk}: nothing leaves ${node} until one starts (tidepool manager --zk ${flags.zk})`);
        printLine(flags.json, { node, warned: true, at: at === undefined ? null : new Date(at).toISOString() }, `node ${node} warned${at !== undefined ? ` (failure predicted at ${new Date(at).toISOString()})` : ''}: the manager moves its jobs off it`);
      });
    });

  jsonOption(secretOption(zkOptions(program.command('clear')
    .argument('<node>', 'node id')
    .description('clear a node\'s failure warning: the resource manager may give it to jobs again'), CLUSTER, 'the warning is kept on the cluster\'s ZooKeeper'), 'write'))
    .addHelpText('after', '\nExample:\n  tidepool clear NODE --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json')
    .action((node: string, flags: Common) => withZk(flags.zk, flags.timeout, clusterSecret(flags.secretFile), async (client) => {
      const cleared = await clearWarning(client, node);
      printLine(flags.json, { node, cleared }, cleared ? `node ${node}: warning cleared` : `node ${node} had no warning`);
    }));
}

/** `--at`: an ISO 8601 time, or a duration from now; ms since the epoch. */
function predictedTime(text: string): number {
  const fromNow = parseDuration(text);
  if (fromNow !== undefined) return Date.now() + fromNow;
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(at)) throw new UsageError(`--at: "${text}" is neither an ISO 8601 time (2026-11-28T02:00:00Z) nor a duration from now (10m)`);
  return at;
}

/** A feed's input (`flag`'s): stdin for `-`, else the file (or named pipe), checked before the manager starts. */
async function openFeed(given: string, flag: string): Promise<{ input: Readable; name: string }> {
  if (given === '-') return { input: process.stdin, name: 'stdin' };
  const path = resolve(given);
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`${flag}: cannot read ${path}: ${err.code ?? err.message}`);
  });
  if (info.isDirectory()) throw new UsageError(`${flag}: ${path} is a directory`);
  return { input: createReadStream(path), name: given };
}

/**
 * `--price-feed`: the spot nodes (warned before the manager starts) are kept from jobs until the first price below the threshold; each
 * notice warns them with its end as the predicted failure (the manager vacates them at once), each
 * price below the threshold after a notice's end clears them. Every action is printed.
 */
async function followSpotPrices(client: CoordClient, feed: { input: Readable; name: string }, flags: ManagerFlags): Promise<LiveSpotFeed> {
  const nodes = flags.spotNodes!;
  const live = new LiveSpotFeed({ threshold: flags.spotThreshold!, speed: flags.speed ?? 1, ...(flags.notice !== undefined ? { noticeMs: flags.notice } : {}) }, async (a) => {
    if (a.type === 'notice') for (const node of nodes) await warnNode(client, node, undefined, a.takeAt);
    if (a.type === 'clear') for (const node of nodes) await clearWarning(client, node);
    const trace = a.type === 'take' ? {} : { price: a.price, traceTime: new Date(a.traceTime).toISOString() };
    printLine(flags.json, { spot: a.type, nodes, ...trace, ...(a.type === 'notice' ? { takeAt: a.takeAt } : {}) },
      a.type === 'notice' ? `spot price ${a.price} at ${trace.traceTime}: interruption notice, ${nodes.join(' ')} taken at ${new Date(a.takeAt).toISOString()}`
        : a.type === 'clear' ? `spot price ${a.price} at ${trace.traceTime}: ${nodes.join(' ')} usable` : `spot nodes taken: ${nodes.join(' ')}`);
  });
  void live.follow(feed.input, feed.name, (err) => log.error('manager', err.message)).then(
    () => log.info('manager', `price feed ${feed.name}: every line read`),
    (err: unknown) => log.error('manager', `price feed ${feed.name} stopped`, err),
  );
  return live;
}

/** Where the manager runs: on the cluster at --zk, or (--embedded) on one of its own; the flags of either only with it. */
function checkPlace(flags: ManagerFlags): void {
  const spot = (['spotNodes', 'spotThreshold', 'notice'] as const).find((k) => flags[k] !== undefined);
  if (flags.priceFeed === undefined && spot !== undefined) throw new UsageError(`--${spot.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} goes with --price-feed`);
  if (flags.priceFeed !== undefined) {
    if (flags.spotNodes === undefined) throw new UsageError('--price-feed: name the spot nodes it drives with --spot-nodes ID…');
    if (flags.spotThreshold === undefined) throw new UsageError('--price-feed: give the price from which spot nodes are not kept, --spot-threshold USD');
    if (!((flags.speed ?? 1) > 0)) throw new UsageError(`--speed: must be above 0, got ${flags.speed}`);
    const stdin = [flags.priceFeed, flags.failureFeed, flags.jobs].filter((f) => f === '-').length;
    if (stdin > 1) throw new UsageError('only one of --price-feed, --failure-feed and --jobs can read stdin (-)');
  }
  if (flags.embedded) {
    if (flags.zk !== undefined) throw new UsageError('--embedded starts a cluster of its own: leave out --zk');
    if (flags.jobs === '-' && flags.failureFeed === '-') throw new UsageError('--jobs and --failure-feed cannot both read stdin (-)');
    return;
  }
  if (flags.zk === undefined) throw new UsageError('--zk: the manager places jobs on a cluster registered on ZooKeeper; or --embedded for a one-machine trial on a cluster of its own');
  const only = (['nodes', 'workers', 'jobs', 'dashboard'] as const).find((k) => flags[k] !== undefined);
  if (only !== undefined) throw new UsageError(`--${only} goes with --embedded (a cluster of its own); on the cluster at --zk, start nodes with tidepool node and queue jobs with tidepool submit`);
}

/** Whether any `tidepool manager` takes part in the managers' election (the elected one acts). */
async function managerRunning(client: CoordClient): Promise<boolean> {
  try {
    return (await client.getChildren(managerPaths().election)).length > 0;
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return false;
    throw err;
  }
}
