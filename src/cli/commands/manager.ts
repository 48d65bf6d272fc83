import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from '../../coord/connect.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import { isFlexibility } from '../../frameworks/malleable/manager/managed-job.js';
import { listManagedJobs, managerPaths, readManagedJob, requestRescale, submitManagedJob, type ManagedJobInfo } from '../../frameworks/malleable/manager/manager-store.js';
import { isPolicyName, POLICY_NAMES } from '../../frameworks/malleable/manager/policies.js';
import { ResourceManager } from '../../frameworks/malleable/manager/resource-manager.js';
import { listNodes } from '../../runtime/job-control.js';
import { log } from '../../util/log.js';
import { UsageError } from '../errors.js';
import { nonNegativeInt, positiveInt, zookeeperConnection } from '../options.js';
import { stopSignal } from '../stop-signal.js';

interface Common { zk?: string; json?: boolean }

/** `tidepool manager|submit|queue|rescale`: the resource manager for rigid, moldable and malleable jobs (docs/malleable.md). */
export function registerManagerCommands(program: Command): void {
  const common = (cmd: Command) => cmd.option('--zk <conn>', 'ZooKeeper ensemble').option('--json', 'print JSON');

  common(program.command('manager').description('run the resource manager: place managed jobs on the pool of nodes by a policy, rescaling malleable jobs split-phase'))
    .option('--policy <name>', `scheduling policy: ${POLICY_NAMES.join(', ')}`, 'equipartition')
    .option('--tgap <seconds>', 'equipartition: minimum time between two rescales of a job (T_gap)', '40')
    .option('--id <id>', 'candidate id in the managers\' election (default: a fresh one)')
    .addHelpText('after', '\nRuns until SIGINT/SIGTERM; several managers may run, one acts (elected).\nExample:\n  tidepool manager --zk zk://127.0.0.1:2181 --policy equipartition --tgap 100 --json')
    .action(async (flags: Common & { policy: string; tgap: string; id?: string }) => {
      if (!isPolicyName(flags.policy)) throw new UsageError(`--policy: "${flags.policy}" is not one of ${POLICY_NAMES.join(', ')}`);
      const tGapMs = nonNegativeInt(flags.tgap, '--tgap') * 1000;
      const conn = zookeeperConnection(flags.zk, 'the manager places jobs on a cluster registered on ZooKeeper');
      const client = await connect(conn, { connectTimeoutMs: 10_000 });
      const manager = new ResourceManager(client, { id: flags.id ?? `manager-${randomBytes(4).toString('hex')}`, policy: flags.policy, tGapMs });
      manager.on('elected', () => line(flags.json, { active: true }, 'manager active'));
      manager.on('event', (e) => line(flags.json, e, `${new Date(e.at).toISOString()} ${e.type} ${e.job} → ${e.nodes.length} node(s)${e.tRescaleMs !== undefined ? ` (T_rescale ${e.tRescaleMs} ms)` : ''}`));
      client.onState((s) => {
        if (s !== 'expired') return;
        log.error('manager', 'coordination session expired; exiting (3) for the supervisor to restart us');
        process.exit(3);
      });
      await manager.start();
      line(flags.json, { ready: true, policy: flags.policy, tGapMs, zk: conn }, `manager ready (${flags.policy}${flags.policy === 'equipartition' ? `, T_gap ${tGapMs / 1000} s` : ''}) on ${conn}`);
      log.info('manager', `${await stopSignal()}: stopping`);
      await manager.stop();
      await client.close();
    });

  common(program.command('submit').argument('<module>', 'task module (a file or a package specifier)').description('queue a job for the resource manager'))
    .requiredOption('--kind <kind>', 'rigid | moldable | malleable')
    .option('--export <name>', 'the task type\'s export in the module', 'default')
    .option('--root <json>', 'the root task\'s state as JSON', 'null')
    .option('--job-kind <module#export>', 'the job kind that runs it (default: the task pool)')
    .option('--min <n>', 'fewest nodes the job runs on', '1')
    .option('--max <n>', 'most nodes the job may have (default: no limit; rigid: its size)')
    .option('--nodes <n>', 'requested size (a rigid job\'s size; default --min)')
    .addHelpText('after', '\nExamples:\n  tidepool submit ./count.js --kind malleable --min 2 --max 8 --root \'{"n":30}\' --zk zk://127.0.0.1:2181\n  tidepool submit ./count.js --kind rigid --nodes 4 --zk zk://127.0.0.1:2181 --json')
    .action((module: string, flags: Common & { kind: string; export: string; root: string; jobKind?: string; min: string; max?: string; nodes?: string }) => {
      if (!isFlexibility(flags.kind)) throw new UsageError(`--kind: "${flags.kind}" is not one of rigid, moldable, malleable`);
      const flexibility = flags.kind;
      const min = positiveInt(flags.min, '--min');
      const max = flags.max === undefined ? undefined : positiveInt(flags.max, '--max');
      const nodes = flags.nodes === undefined ? undefined : positiveInt(flags.nodes, '--nodes');
      if (max !== undefined && max < min) throw new UsageError(`--max (${max}) is below --min (${min})`);
      if (nodes !== undefined && (nodes < min || (max !== undefined && nodes > max)) && flexibility !== 'rigid') throw new UsageError(`--nodes (${nodes}) must lie between --min and --max`);
      let root: unknown;
      try {
        root = JSON.parse(flags.root);
      } catch (err) {
        throw new UsageError(`--root: not JSON (${(err as Error).message})`);
      }
      const kind = flags.jobKind === undefined ? undefined : moduleRef(flags.jobKind, '--job-kind');
      return withClient(flags, async (client) => {
        let spec;
        try {
          spec = await submitManagedJob(client, {
            ref: { module: moduleSpecifier(module), export: flags.export }, root, flexibility, minNodes: min,
            ...(max !== undefined ? { maxNodes: max } : {}), ...(nodes !== undefined ? { nodes } : {}), ...(kind ? { kind } : {}),
          });
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        line(flags.json, { job: spec.id, kind: flexibility, minNodes: spec.minNodes, maxNodes: spec.maxNodes ?? null, nodes: spec.nodes }, `job ${spec.id} queued (${flexibility})`);
      });
    });

  common(program.command('queue').description('list the managed jobs: kind, state, nodes, node range, rescales'))
    .addHelpText('after', '\nExample:\n  tidepool queue --zk zk://127.0.0.1:2181 --json')
    .action((flags: Common) => withClient(flags, async (client) => {
      const nodes = await listNodes(client);
      const jobs = (await listManagedJobs(client)).map((j) => summary(j, nodes.filter((n) => n.assignment === j.id).map((n) => n.id)));
      if (flags.json) return line(true, { jobs }, '');
      if (jobs.length === 0) return void process.stdout.write('no managed jobs\n');
      table([['JOB', 'KIND', 'STATE', 'NODES', 'MIN', 'MAX', 'RESCALES', 'PENDING'], ...jobs.map((j) => [
        j.id, j.kind, j.state, String(j.nodes.length), String(j.minNodes), j.maxNodes === null ? '-' : String(j.maxNodes), String(j.rescales), j.pending ? `shrink to ${j.pending.nodes.length}` : '-',
      ])]);
    }));

  common(program.command('rescale').argument('<job>', 'job id').argument('<nodes>', 'node count').description('ask the resource manager to rescale a managed job (clamped to its node range)'))
    .option('--timeout <ms>', 'give up waiting for the manager after this long (the request stays queued)', '60000')
    .addHelpText('after', '\nUnder equipartition the policy may change the size again once T_gap has passed.\nExample:\n  tidepool rescale j-lx3k2-1a2b3c 2 --zk zk://127.0.0.1:2181')
    .action((job: string, count: string, flags: Common & { timeout: string }) => {
      const n = positiveInt(count, 'NODES');
      const timeoutMs = nonNegativeInt(flags.timeout, '--timeout');
      return withClient(flags, async (client) => {
        const info = await readManagedJob(client, job);
        if (!info) throw new UsageError(`no managed job ${job} in the cluster`);
        if (info.finished) throw new UsageError(`job ${job} has ended (${info.outcome})`);
        if (info.flexibility !== 'malleable') throw new UsageError(`job ${job} is ${info.flexibility}: only malleable jobs are rescaled`);
        await requestRescale(client, job, n);
        await consumed(client, job, timeoutMs);
        const nodes = (await listNodes(client)).filter((x) => x.assignment === job).map((x) => x.id);
        line(flags.json, { job, requested: n, nodes }, `job ${job}: rescale to ${n} taken by the manager; ${nodes.length} node(s) now`);
      });
    });
}

/** Resolves once the manager has taken the job's rescale request (the record no longer holds it). */
function consumed(client: CoordClient, job: string, timeoutMs: number): Promise<void> {
  return new Promise((resolveDone, reject) => {
    const timer = setTimeout(() => {
      handle.close();
      reject(new Error(`no resource manager took the request within ${timeoutMs} ms (is \`tidepool manager\` running?); it stays queued`));
    }, timeoutMs);
    const handle = watchData(client, managerPaths().record(job), (d) => {
      if (d && (JSON.parse(d.data.toString('utf8')) as { rescaleTo?: number }).rescaleTo !== undefined) return;
      clearTimeout(timer);
      handle.close();
      resolveDone();
    });
  });
}

function summary(j: ManagedJobInfo, nodes: string[]) {
  const state = j.outcome ?? (nodes.length > 0 || j.started ? 'running' : 'waiting');
  return {
    id: j.id, kind: j.flexibility, state, nodes, minNodes: j.minNodes, maxNodes: j.maxNodes === Infinity ? null : j.maxNodes,
    rescales: j.record.events.filter((e) => e.type !== 'launch').length, pending: j.record.pending ?? null, events: j.record.events, module: j.module,
  };
}

/** A local file becomes a file URL (node processes on this machine import it); anything else is a package specifier. */
function moduleSpecifier(module: string): string {
  return existsSync(module) ? pathToFileURL(resolve(module)).href : module;
}

function moduleRef(value: string, flag: string): { module: string; export: string } {
  const [module, exp, ...rest] = value.split('#');
  if (!module || rest.length > 0) throw new UsageError(`${flag}: "${value}" is not MODULE or MODULE#EXPORT`);
  return { module: moduleSpecifier(module), export: exp ?? 'default' };
}

async function withClient(flags: Common, run: (client: CoordClient) => Promise<void>): Promise<void> {
  const client = await connect(zookeeperConnection(flags.zk, 'this command acts on a cluster registered on ZooKeeper'), { connectTimeoutMs: 10_000 });
  try {
    await run(client);
  } finally {
    await client.close();
  }
}

function line(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
}
