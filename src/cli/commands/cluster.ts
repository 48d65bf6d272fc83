import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import { ClusterReader } from '../../dashboard/cluster-reader.js';
import { listManagedJobs, managerPaths, readManagedJob, releasePin, requestRescale, type ManagedJobInfo } from '../../frameworks/malleable/manager/manager-store.js';
import { decode } from '../../util/codec.js';
import { cancelJob } from '../../runtime/job/outcome.js';
import { drainNode, listNodes, scaleJob } from '../../runtime/scheduler/index.js';
import { listJobs } from '../../runtime/client/job-list.js';
import { requestJob } from '../../runtime/client/job-requests.js';
import { jobPaths } from '../../runtime/job/job-paths.js';
import { pruneFinishedJobs } from '../../runtime/client/job-retention.js';
import type { JobOutcome } from '../../runtime/job/outcome.js';
import type { JobSpec } from '../../runtime/job/job-spec.js';
import { jsonOption, secretOption, zkOptions } from '../common-options.js';
import { withZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterCredential, clusterSecret } from '../options.js';
import { argument, printJson, table } from '../output.js';
import { givenInOldForm } from '../settings/apply-settings.js';
import { deprecated } from '../settings/deprecations.js';
import { formatDuration, parseDuration } from '../settings/durations.js';
import { DEFAULT_TIMEOUT, duration, kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';

interface Common {
  zk: string;
  timeout: number;
  secretFile?: string;
  json?: boolean;
}

const ACTS = 'this command acts on a running cluster';
const CLUSTER = 'the cluster\'s ZooKeeper ensemble';

/** `tidepool status|jobs|scale|cancel|control|drain`: act on a running cluster registered on ZooKeeper. */
export function registerClusterCommands(program: SettingsCommand): void {
  // Commands that change the cluster need its secret; reading ones take the secret or a monitor credential.
  const common = (cmd: SettingsCommand, use: 'write' | 'read' | string = 'write') => jsonOption(secretOption(zkOptions(cmd, CLUSTER, ACTS), use));

  common(program.command('status').description('list the nodes of the cluster: address, workers, job, busy workers, queue depth, tasks done'), 'read')
    .addHelpText('after', '\nExample:\n  tidepool status --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret')
    .action((opts: Common) => withZk(opts.zk, opts.timeout, credential('read', opts), async (client) => {
      // What nodes publish (see docs/operations.md); stats are null until a node first reports.
      const nodes = (await new ClusterReader(client).readNodes()).map(({ info, stats }) => ({ ...info, stats }));
      if (opts.json) return printJson({ nodes });
      if (nodes.length === 0) return void process.stdout.write('no nodes\n');
      table([['NODE', 'ADDRESS', 'WORKERS', 'JOB', 'ASSIGNED', 'BUSY', 'QUEUED', 'DONE'], ...nodes.map((n) => [
        n.id, n.address, String(n.workers), n.job ?? '-', n.assignment || '-',
        n.stats ? String(n.stats.busy) : '-', n.stats ? String(n.stats.queued) : '-', n.stats ? String(n.stats.tasksDone) : '-',
      ])]);
    }));

  const jobs = common(program.command('jobs')
    .description('list the jobs of the cluster with their state (--managed: the resource manager\'s jobs with flexibility, node range and rescales); --prune removes old finished ones (with the cluster secret)'), 'file holding the cluster secret or a monitor credential (`tidepool secret monitor`), or either in $TIDEPOOL_SECRET: reading a cluster needs one, --prune the secret')
    .option('--managed', 'only the jobs of the resource manager (tidepool manager), with their flexibility, node range, rescales and pending shrink')
    .setting('--prune <keep>', 'remove the znodes of finished jobs beyond the KEEP most recently finished (running jobs are never touched)', kinds.count)
    .setting('--grace <duration>', 'with --prune: only jobs finished at least this long ago', duration('s'), '60s')
    .addHelpText('after', `
Old name: tidepool queue (= tidepool jobs --managed; it still works, with a note, for one release).

Examples:
  tidepool jobs --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json
  tidepool jobs --managed --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret
  tidepool jobs --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --prune 10`);
  jobs.deprecatedName('queue', ' --managed');
  jobs.action((opts: Common & { managed?: boolean; prune?: number; grace: number }) => withZk(opts.zk, opts.timeout, credential(opts.prune !== undefined ? 'write' : 'read', opts), async (client) => {
    const asQueue = jobs.invokedAs === 'queue';
    if (opts.prune !== undefined) {
      const pruned = await pruneFinishedJobs(client, { keep: opts.prune, graceMs: opts.grace });
      if (opts.json) return printJson({ pruned });
      return void process.stdout.write(pruned.length === 0 ? 'no finished jobs to remove\n' : `removed ${pruned.length} finished job(s): ${pruned.join(' ')}\n`);
    }
    if (opts.managed || asQueue) return printManaged(client, opts.json === true, asQueue);
    const nodes = await listNodes(client);
    const all = (await Promise.all((await listJobs(client)).map(async (id) => {
      const paths = jobPaths(id);
      const spec = await client.getData(paths.spec).then((r) => decode<JobSpec>(r.data), () => null);
      if (!spec) return null; // removed meanwhile
      const result = await client.getData(paths.result).then((r) => decode<JobOutcome>(r.data), () => null);
      return { id, task: spec.label, state: result ? result.status : 'running', nodes: nodes.filter((n) => n.job === id).length, createdAt: spec.createdAt };
    }))).filter((j) => j !== null);
    if (opts.json) return printJson({ jobs: all });
    if (all.length === 0) return void process.stdout.write('no jobs\n');
    table([['JOB', 'STATE', 'NODES', 'TASK'], ...all.map((j) => [j.id, j.state, String(j.nodes), j.task])]);
  }));

  const scale = common(program.command('scale')
    .argument('<job>', 'job id').argument('[nodes]', 'node count (leave out with --release)')
    .description('set the number of nodes of a job: idle nodes join, surplus nodes drain; a job of the resource manager is rescaled by the manager (malleable jobs only, within their node range) and kept at that size until released'))
    .setting('--wait <duration>', 'for a job of the resource manager: how long to wait until the manager takes the request (it stays queued after)', kinds.duration, '60s')
    .option('--release', 'a job of the resource manager: give its size back to the manager\'s policy')
    .addHelpText('after', `
A managed job's size sticks: the manager keeps it at NODES (within its node range) until
\`tidepool scale JOB --release\`; T_gap and the cost of a rescale do not undo it. The manager still
moves it off a node with a failure warning (tidepool warn), and brings it back to NODES as nodes
come free. Released, the policy sizes it again from its next pass (after T_gap).
Old name: tidepool rescale (it still works, with a note, for one release).

Examples:
  tidepool scale JOB 2 --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret
  tidepool scale JOB --release --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json`);
  scale.deprecatedName('rescale');
  scale.action((job: string, count: string | undefined, opts: Common & { wait: number; release?: boolean }) => {
    if (opts.release === true && count !== undefined) throw new UsageError('give NODES or --release, not both');
    if (opts.release !== true && count === undefined) throw new UsageError('NODES is required (or --release, for a job of the resource manager)');
    const n = count === undefined ? 0 : argument(count, 'NODES', kinds.count);
    const waitMs = legacyWait(scale, opts);
    return withZk(opts.zk, opts.timeout, credential('write', opts), async (client) => {
      const managed = await readManagedJob(client, job);
      if (opts.release === true) {
        const was = managed ? await releasePin(client, job) : undefined; // only a job of the resource manager keeps a size until released
        if (opts.json) return printJson({ job, released: was ?? null });
        return void process.stdout.write(was === undefined ? `job ${job} had no size of the operator's; nothing to release\n` : `job ${job}: size ${was} released; the manager's policy sizes it again\n`);
      }
      if (managed) return rescaleManaged(client, managed, n, waitMs, opts.json === true);
      if (scale.invokedAs === 'rescale') throw new UsageError(`no managed job ${job} in the cluster`);
      if (!(await client.exists(jobPaths(job).spec))) throw new UsageError(`no job ${job} in the cluster`);
      const change = await scaleJob(client, job, n);
      if (opts.json) return printJson({ job, ...change });
      process.stdout.write(`job ${job}: ${change.size} node(s)${change.added.length ? `, added ${change.added.join(' ')}` : ''}${change.released.length ? `, draining ${change.released.join(' ')}` : ''}${change.size < n ? ` (only ${change.size} available)` : ''}\n`);
    });
  });

  common(program.command('cancel').argument('<job>', 'job id').description('cancel a job: its tasks stop, its nodes are freed, its outcome is "cancelled"'))
    .addHelpText('after', '\nExample:\n  tidepool cancel JOB --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret')
    .action((job: string, opts: Common) => withZk(opts.zk, opts.timeout, credential('write', opts), async (client) => {
      const cancelled = await cancelJob(client, job).catch((err: unknown) => Promise.reject(new UsageError((err as Error).message)));
      if (opts.json) return printJson({ job, cancelled });
      process.stdout.write(cancelled ? `job ${job} cancelled\n` : `job ${job} had already ended\n`);
    }));

  const control = common(program.command('control')
    .argument('<job>', 'job id').argument('<type>', 'request type: status, or one the job\'s kind takes').argument('[body]', 'request body as JSON (default null)')
    .description('ask a running job for something through its control channel and print its acknowledgement'))
    .setting('--wait <duration>', 'how long to wait for the acknowledgement (the request stays queued after)', kinds.duration, '30s')
    .addHelpText('after', '\nExamples:\n  tidepool control JOB status --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret\n  tidepool control JOB status --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --wait 10s --json');
  control.action((job: string, type: string, rawBody: string | undefined, opts: Common & { wait: number }) => {
    const timeoutMs = legacyWait(control, opts);
    let body: unknown = null;
    if (rawBody !== undefined) {
      try {
        body = JSON.parse(rawBody);
      } catch (err) {
        throw new UsageError(`BODY: not JSON (${(err as Error).message})`);
      }
    }
    return withZk(opts.zk, opts.timeout, credential('write', opts), async (client) => {
      const result = await requestJob(client, job, type, body, { timeoutMs, from: 'cli' }).catch((err: unknown) => Promise.reject(new UsageError((err as Error).message)));
      if (opts.json) return printJson({ job, type, result });
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    });
  });

  common(program.command('drain').argument('<node>', 'node id').description('move a node out of its job: its tasks migrate to the job\'s other nodes'))
    .addHelpText('after', '\nExample:\n  tidepool drain NODE --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret')
    .action((node: string, opts: Common) => withZk(opts.zk, opts.timeout, credential('write', opts), async (client) => {
      const drained = await drainNode(client, node).catch((err: unknown) => Promise.reject(new UsageError((err as Error).message)));
      if (opts.json) return printJson({ node, draining: drained });
      process.stdout.write(drained ? `node ${node} is draining\n` : `node ${node} has no job\n`);
    }));
}

/** The credential a command connects with: the cluster secret to change the cluster; to read, the secret or a monitor credential if given. */
function credential(need: 'read' | 'write', opts: Common) {
  return need === 'write' ? clusterSecret(opts.secretFile) : clusterCredential(opts.secretFile);
}

/**
 * How long to wait for an answer. Before --wait, `control` and `rescale` took `--timeout MS` for it:
 * a --timeout given as a bare number (the old form) still means that, for one release.
 */
function legacyWait(cmd: SettingsCommand, opts: Common & { wait: number }): number {
  if (!givenInOldForm(cmd, 'timeout')) return opts.wait;
  const waitMs = opts.timeout;
  opts.timeout = parseDuration(DEFAULT_TIMEOUT)!;
  deprecated(`on ${cmd.name()}, --timeout ${waitMs} stands for --wait ${formatDuration(waitMs)} (how long to wait for the answer); --timeout with a unit is how long to wait for ZooKeeper`);
  return waitMs;
}

async function printManaged(client: CoordClient, json: boolean, asQueue: boolean): Promise<void> {
  const nodes = await listNodes(client);
  const jobs = (await listManagedJobs(client)).map((j) => managedSummary(j, nodes.filter((n) => n.assignment === j.id).map((n) => n.id), asQueue));
  if (json) return printJson({ jobs });
  if (jobs.length === 0) return void process.stdout.write('no managed jobs\n');
  table([['JOB', 'FLEXIBILITY', 'STATE', 'NODES', 'MIN', 'MAX', 'PINNED', 'RESCALES', 'PENDING'], ...jobs.map((j) => [
    j.id, j.flexibility, j.state, String(j.nodes.length), String(j.minNodes), j.maxNodes === null ? '-' : String(j.maxNodes), j.pinned === null ? '-' : String(j.pinned), String(j.rescales), j.pending ? `shrink to ${j.pending.nodes.length}` : '-',
  ])]);
}

function managedSummary(j: ManagedJobInfo, nodes: string[], asQueue: boolean) {
  const state = j.outcome ?? (nodes.length > 0 || j.started ? 'running' : 'waiting');
  return {
    id: j.id, flexibility: j.flexibility, ...(asQueue ? { kind: j.flexibility } : {}), state, nodes, minNodes: j.range.min, maxNodes: j.range.max === Infinity ? null : j.range.max,
    pinned: j.record.pin ?? null,
    rescales: j.record.events.filter((e) => e.type !== 'launch').length, pending: j.record.pending ?? null, events: j.record.events, module: j.module,
  };
}

async function rescaleManaged(client: CoordClient, info: ManagedJobInfo, n: number, waitMs: number, json: boolean): Promise<void> {
  const job = info.id;
  if (info.finished) throw new UsageError(`job ${job} has ended (${info.outcome})`);
  if (info.flexibility !== 'malleable') throw new UsageError(`job ${job} is ${info.flexibility}: the resource manager rescales only malleable jobs`);
  if (n < 1) throw new UsageError(`NODES: a managed job keeps at least 1 node, got ${n}`);
  await requestRescale(client, job, n);
  await taken(client, job, waitMs);
  const nodes = (await listNodes(client)).filter((x) => x.assignment === job).map((x) => x.id);
  if (json) return printJson({ job, requested: n, nodes, pinned: true });
  process.stdout.write(`job ${job}: rescale to ${n} taken by the manager (kept until \`tidepool scale ${job} --release\`); ${nodes.length} node(s) now\n`);
}

/** Resolves once the manager has taken the job's rescale request (the record no longer holds it). */
function taken(client: CoordClient, job: string, waitMs: number): Promise<void> {
  return new Promise((resolveDone, reject) => {
    const timer = setTimeout(() => {
      handle.close();
      reject(new Error(`no resource manager took the request within ${formatDuration(waitMs)} (is \`tidepool manager\` running?); it stays queued`));
    }, waitMs);
    const handle = watchData(client, managerPaths().record(job), (d) => {
      if (d && (JSON.parse(d.data.toString('utf8')) as { rescaleTo?: number }).rescaleTo !== undefined) return;
      clearTimeout(timer);
      handle.close();
      resolveDone();
    });
  });
}
