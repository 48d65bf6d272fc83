import type { Command } from 'commander';
import { connect } from '../../coord/connect.js';
import type { CoordClient } from '../../coord/types.js';
import { decode } from '../../runtime/codec.js';
import { ClusterReader } from '../../dashboard/cluster-reader.js';
import { cancelJob, drainNode, listJobs, listNodes, requestJob, scaleJob } from '../../runtime/job-control.js';
import { jobPaths } from '../../runtime/job-paths.js';
import { pruneFinishedJobs } from '../../runtime/job-retention.js';
import type { JobOutcome, JobSpec } from '../../runtime/job-spec.js';
import { UsageError } from '../errors.js';
import { nonNegativeInt, zookeeperConnection } from '../options.js';

interface Common {
  zk?: string;
  json?: boolean;
}

/** `tidepool status|jobs|scale|drain`: act on a running cluster registered on ZooKeeper. */
export function registerClusterCommands(program: Command): void {
  const common = (cmd: Command) => cmd
    .option('--zk <conn>', 'ZooKeeper ensemble')
    .option('--json', 'print one JSON object');

  common(program.command('status').description('list the nodes of the cluster: address, workers, job, busy workers, queue depth, tasks done'))
    .addHelpText('after', '\nExample:\n  tidepool status --zk zk://127.0.0.1:2181')
    .action((opts: Common) => withCluster(opts, async (client) => {
      // What nodes publish (see docs/operations.md); stats are null until a node first reports.
      const nodes = (await new ClusterReader(client).readNodes()).map(({ info, stats }) => ({ ...info, stats }));
      if (opts.json) return print({ nodes });
      if (nodes.length === 0) return void process.stdout.write('no nodes\n');
      table([['NODE', 'ADDRESS', 'WORKERS', 'JOB', 'ASSIGNED', 'BUSY', 'QUEUED', 'DONE'], ...nodes.map((n) => [
        n.id, n.address, String(n.workers), n.job ?? '-', n.assignment || '-',
        n.stats ? String(n.stats.busy) : '-', n.stats ? String(n.stats.queued) : '-', n.stats ? String(n.stats.tasksDone) : '-',
      ])]);
    }));

  common(program.command('jobs').description('list the jobs of the cluster with their state; --prune removes old finished ones'))
    .option('--prune <keep>', 'remove the znodes of finished jobs beyond the KEEP most recently finished (running jobs are never touched)')
    .option('--grace <seconds>', 'with --prune: only jobs finished at least this long ago', '60')
    .addHelpText('after', '\nExamples:\n  tidepool jobs --zk zk://127.0.0.1:2181 --json\n  tidepool jobs --zk zk://127.0.0.1:2181 --prune 10')
    .action((opts: Common & { prune?: string; grace: string }) => {
      const keep = opts.prune === undefined ? undefined : nonNegativeInt(opts.prune, '--prune');
      const graceSeconds = nonNegativeInt(opts.grace, '--grace');
      return withCluster(opts, async (client) => {
        if (keep !== undefined) {
          const pruned = await pruneFinishedJobs(client, { keep, graceMs: graceSeconds * 1000 });
          if (opts.json) return print({ pruned });
          return void process.stdout.write(pruned.length === 0 ? 'no finished jobs to remove\n' : `removed ${pruned.length} finished job(s): ${pruned.join(' ')}\n`);
        }
        const nodes = await listNodes(client);
        const jobs = (await Promise.all((await listJobs(client)).map(async (id) => {
          const paths = jobPaths(id);
          const spec = await client.getData(paths.spec).then((r) => decode<JobSpec>(r.data), () => null);
          if (!spec) return null; // removed meanwhile
          const result = await client.getData(paths.result).then((r) => decode<JobOutcome>(r.data), () => null);
          return { id, task: spec.ref.module, state: result ? result.status : 'running', nodes: nodes.filter((n) => n.job === id).length, createdAt: spec.createdAt };
        }))).filter((j) => j !== null);
        if (opts.json) return print({ jobs });
        if (jobs.length === 0) return void process.stdout.write('no jobs\n');
        table([['JOB', 'STATE', 'NODES', 'TASK'], ...jobs.map((j) => [j.id, j.state, String(j.nodes), j.task])]);
      });
    });

  common(program.command('scale').argument('<job>', 'job id').argument('<nodes>', 'node count').description('set the number of nodes of a job (idle nodes join; surplus nodes drain)'))
    .addHelpText('after', '\nExample:\n  tidepool scale j-lx3k2-1a2b3c 4 --zk zk://127.0.0.1:2181')
    .action((job: string, count: string, opts: Common) => {
      const n = nonNegativeInt(count, 'NODES');
      return withCluster(opts, async (client) => {
        if (!(await client.exists(jobPaths(job).spec))) throw new UsageError(`no job ${job} in the cluster`);
        const change = await scaleJob(client, job, n);
        if (opts.json) return print({ job, ...change });
        process.stdout.write(`job ${job}: ${change.size} node(s)${change.added.length ? `, added ${change.added.join(' ')}` : ''}${change.released.length ? `, draining ${change.released.join(' ')}` : ''}${change.size < n ? ` (only ${change.size} available)` : ''}\n`);
      });
    });

  common(program.command('cancel').argument('<job>', 'job id').description('cancel a job: its tasks stop, its nodes are freed, its outcome is "cancelled"'))
    .addHelpText('after', '\nExample:\n  tidepool cancel j-lx3k2-1a2b3c --zk zk://127.0.0.1:2181')
    .action((job: string, opts: Common) => withCluster(opts, async (client) => {
      let cancelled: boolean;
      try {
        cancelled = await cancelJob(client, job);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      if (opts.json) return print({ job, cancelled });
      process.stdout.write(cancelled ? `job ${job} cancelled\n` : `job ${job} had already ended\n`);
    }));

  common(program.command('control').argument('<job>', 'job id').argument('<type>', 'request type: status, or one the job\'s kind takes').argument('[body]', 'request body as JSON (default null)')
    .description('ask a running job for something through its control channel and print its acknowledgement'))
    .option('--timeout <ms>', 'give up waiting for the acknowledgement after this long (the request stays queued)', '30000')
    .addHelpText('after', '\nExamples:\n  tidepool control j-lx3k2-1a2b3c status --zk zk://127.0.0.1:2181\n  tidepool control j-lx3k2-1a2b3c rescale \'{"nodes":2}\' --zk zk://127.0.0.1:2181 --json')
    .action((job: string, type: string, rawBody: string | undefined, opts: Common & { timeout: string }) => {
      const timeoutMs = nonNegativeInt(opts.timeout, '--timeout');
      let body: unknown = null;
      if (rawBody !== undefined) {
        try {
          body = JSON.parse(rawBody);
        } catch (err) {
          throw new UsageError(`BODY: not JSON (${(err as Error).message})`);
        }
      }
      return withCluster(opts, async (client) => {
        let result: unknown;
        try {
          result = await requestJob(client, job, type, body, { timeoutMs, from: 'cli' });
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        if (opts.json) return print({ job, type, result });
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      });
    });

  common(program.command('drain').argument('<node>', 'node id').description('move a node out of its job: its tasks migrate to the job\'s other nodes'))
    .addHelpText('after', '\nExample:\n  tidepool drain n-1a2b3c4d --zk zk://127.0.0.1:2181')
    .action((node: string, opts: Common) => withCluster(opts, async (client) => {
      let drained: boolean;
      try {
        drained = await drainNode(client, node);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      if (opts.json) return print({ node, draining: drained });
      process.stdout.write(drained ? `node ${node} is draining\n` : `node ${node} has no job\n`);
    }));
}

async function withCluster(opts: Common, run: (client: CoordClient) => Promise<void>): Promise<void> {
  const conn = zookeeperConnection(opts.zk, 'this command acts on a running cluster');
  const client = await connect(conn, { connectTimeoutMs: 10_000 });
  try {
    await run(client);
  } finally {
    await client.close();
  }
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
}
