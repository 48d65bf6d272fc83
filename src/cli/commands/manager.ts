import { randomBytes } from 'node:crypto';
import { isCoordError } from '../../coord/errors.js';
import type { CoordClient } from '../../coord/types.js';
import { FLEXIBILITIES, type Flexibility } from '../../frameworks/malleable/manager/managed-job.js';
import { managerPaths, submitManagedJob } from '../../frameworks/malleable/manager/manager-store.js';
import { MALLEABLE_KIND } from '../../frameworks/malleable/malleable-kind.js';
import { POLICY_NAMES, type PolicyName } from '../../frameworks/malleable/manager/policies.js';
import { ResourceManager } from '../../frameworks/malleable/manager/resource-manager.js';
import { log } from '../../util/log.js';
import { jsonOption, zkOptions } from '../common-options.js';
import { connectZk, withZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { moduleRef, moduleSpecifier } from '../module-specifier.js';
import { printLine } from '../output.js';
import { warnOnce } from '../settings/deprecations.js';
import { duration, kinds, oneOf } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';
import { jsonArgument } from './iterate-input.js';
import { malleableApplication, malleableInput } from './malleable-input.js';

interface Common {
  zk: string;
  timeout: number;
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

/** `tidepool manager|submit`: the resource manager for rigid, moldable and malleable jobs (docs/malleable.md); its jobs are listed by `jobs --managed` and rescaled by `scale`. */
export function registerManagerCommands(program: SettingsCommand): void {
  jsonOption(zkOptions(program.command('manager')
    .description('run the resource manager: place managed jobs on the pool of nodes by a policy, rescaling malleable jobs split-phase (after "Towards Realizing the Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé)'),
  CLUSTER, 'the manager places jobs on a cluster registered on ZooKeeper'), 'print one JSON line per event')
    .setting('--policy <name>', 'scheduling policy', oneOf(POLICY_NAMES), 'equipartition')
    .setting('--tgap <duration>', 'equipartition: minimum time between two rescales of a job (T_gap)', duration('s'), '40s')
    .setting('--id <id>', 'candidate id in the managers\' election (default: a fresh one)', kinds.text)
    .addHelpText('after', '\nRuns until SIGINT/SIGTERM; several managers may run, one acts (elected).\n\nExample:\n  tidepool manager --zk 127.0.0.1:2181 --policy equipartition --tgap 100s --json')
    .action(async (flags: Common & { policy: PolicyName; tgap: number; id?: string }) => {
      // Listening for SIGTERM before anything is announced: a signal right after the first line must stop us cleanly.
      const stopping = stopSignal();
      const client = await connectZk(flags.zk, flags.timeout);
      const manager = new ResourceManager(client, { id: flags.id ?? `manager-${randomBytes(4).toString('hex')}`, policy: flags.policy, tGapMs: flags.tgap });
      manager.on('elected', () => printLine(flags.json, { active: true }, 'manager active'));
      manager.on('event', (e) => printLine(flags.json, e, `${new Date(e.at).toISOString()} ${e.type} ${e.job} → ${e.nodes.length} node(s)${e.tRescaleMs !== undefined ? ` (T_rescale ${e.tRescaleMs} ms)` : ''}`));
      client.onState((s) => {
        if (s !== 'expired') return;
        log.error('manager', 'coordination session expired; exiting (3) for the supervisor to restart us');
        process.exit(3);
      });
      await manager.start();
      printLine(flags.json, { ready: true, policy: flags.policy, tGapMs: flags.tgap, zk: flags.zk }, `manager ready (${flags.policy}${flags.policy === 'equipartition' ? `, T_gap ${flags.tgap / 1000} s` : ''}) on ${flags.zk}`);
      log.info('manager', `${await stopping}: stopping`);
      await manager.stop();
      await client.close();
    });

  jsonOption(zkOptions(program.command('submit')
    .argument('<module>', 'task module: a file (relative to the current directory) or a package specifier; with --job-kind malleable, a malleable application: stencil, wave, leanmd, lulesh or a module')
    .description('queue a job for the resource manager'), CLUSTER, 'jobs are queued on a cluster registered on ZooKeeper'))
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
  tidepool submit examples/count.js --flexibility malleable --min 1 --max 2 --root '{"n":200000}' --zk 127.0.0.1:2181
  tidepool submit examples/count.js --flexibility rigid --nodes 1 --root '{"n":200000}' --zk 127.0.0.1:2181 --json
  tidepool submit stencil --job-kind malleable --flexibility malleable --min 1 --max 2 --input '{"params":{"grid":256,"blocks":4,"iterations":200},"runtime":{"checkpointEvery":50}}' --zk 127.0.0.1:2181
  tidepool submit examples/malleable/heat.js --job-kind malleable --flexibility moldable --max 2 --input '{"params":{"cells":2000,"segments":16,"loss":0.1,"tol":1e-9,"iterations":5000}}' --zk 127.0.0.1:2181 --json`)
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
      const malleable = flags.jobKind === 'malleable';
      const kind = flags.jobKind === undefined ? undefined : malleable ? MALLEABLE_KIND : moduleRef(flags.jobKind, '--job-kind');
      let input = flags.input === undefined ? undefined : jsonArgument(flags.input, '--input');
      let ref = { module: moduleSpecifier(module, 'MODULE'), export: flags.export };
      if (malleable) {
        // The application and its input are checked here, before anything is queued.
        if (input === undefined) throw new UsageError('--input: a malleable job needs its input {"params": {…}, "runtime": {…}}');
        const given = await malleableApplication(flags.export === 'default' ? module : `${module}#${flags.export}`, 'MODULE');
        input = malleableInput(given, input, '--input');
        ref = given.ref;
      }
      return withZk(flags.zk, flags.timeout, async (client) => {
        let spec;
        try {
          spec = await submitManagedJob(client, {
            ref, root, flexibility, minNodes: min,
            ...(max !== undefined ? { maxNodes: max } : {}), ...(nodes !== undefined ? { nodes } : {}), ...(kind ? { kind } : {}),
            ...(input !== undefined ? { input } : {}),
          });
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        if (!(await managerRunning(client))) warnOnce(`no resource manager is running on ${flags.zk}: job ${spec.id} waits in the queue until one starts (tidepool manager --zk ${flags.zk})`);
        printLine(flags.json, { job: spec.id, flexibility, minNodes: spec.minNodes, maxNodes: spec.maxNodes ?? null, nodes: spec.nodes }, `job ${spec.id} queued (${flexibility})`);
      });
    });
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
