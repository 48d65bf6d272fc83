import { inspect } from 'node:util';
import { jobPaths } from '../../runtime/job/job-paths.js';
import type { JobOutcome } from '../../runtime/job/outcome.js';
import { jsonOption, secretOption, zkOptions } from '../common-options.js';
import { connectCluster } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterCredential } from '../options.js';
import { formatDuration } from '../settings/durations.js';
import { kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';

interface ResultFlags {
  zk: string;
  timeout: number;
  secretFile?: string;
  wait?: number;
  json?: boolean;
}

/**
 * `tidepool result JOB`: a finished job's result, decoded (what `job.result()` gives a program).
 * Reading needs the cluster secret or its monitor credential; a result too large for ZooKeeper is held
 * in the data plane, and fetching it needs the secret itself.
 */
export function registerResultCommand(program: SettingsCommand): void {
  jsonOption(secretOption(zkOptions(program.command('result')
    .argument('<job>', 'job id')
    .description('print a finished job\'s result (failed or cancelled jobs: their outcome, exit code 1)'),
  'the cluster\'s ZooKeeper ensemble', 'the job is on a cluster registered on ZooKeeper'), 'read'), 'print one JSON object: {job, status, value} (or error)')
    .setting('--wait <duration>', 'wait this long for a job that has not finished yet (default: do not wait)', kinds.duration)
    .addHelpText('after', `
A result larger than 512 KiB is held by the job's nodes: with the cluster secret (not a monitor
credential) it is fetched from them.

Examples:
  tidepool result JOB --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret
  tidepool result JOB --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --wait 1m --json`)
    .action(async (job: string, flags: ResultFlags) => {
      const secret = clusterCredential(flags.secretFile);
      const cluster = await connectCluster(flags.zk, flags.timeout, secret !== undefined ? { secret } : {});
      try {
        const client = cluster.coordination;
        if (!(await client.exists(jobPaths(job).spec))) throw new UsageError(`no job ${job} in the cluster`);
        if (flags.wait === undefined && !(await client.exists(jobPaths(job).result))) {
          throw new Error(`job ${job} has not finished yet (--wait DURATION waits for it)`);
        }
        const handle = await cluster.job(job);
        const outcome = await within(handle.outcome(), flags.wait, job).catch((err: unknown) => {
          // Without the secret this client has no data plane: say how to get one.
          const message = (err as Error).message;
          if (message.includes('held in the data plane') && !secret?.isSecret) throw new Error(`${message.replace(/: connect with the cluster secret.*$/, '')}: --secret-file (or TIDEPOOL_SECRET) with the cluster secret fetches it`);
          throw err;
        });
        print(job, outcome, flags.json === true);
        if (outcome.status !== 'done') process.exitCode = 1;
      } finally {
        await cluster.close();
      }
    });
}

function within(outcome: Promise<JobOutcome>, waitMs: number | undefined, job: string): Promise<JobOutcome> {
  if (waitMs === undefined) return outcome;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`job ${job} did not finish within ${formatDuration(waitMs)} (--wait)`)), waitMs);
  });
  return Promise.race([outcome, late]).finally(() => clearTimeout(timer));
}

function print(job: string, outcome: JobOutcome, json: boolean): void {
  if (json) {
    const body = outcome.status === 'done' ? { value: outcome.value } : outcome.status === 'failed' ? { error: outcome.error } : {};
    process.stdout.write(`${JSON.stringify({ job, status: outcome.status, ...body }, jsonValue)}\n`);
    return;
  }
  if (outcome.status === 'done') process.stdout.write(`${inspect(outcome.value, { depth: null, maxArrayLength: 1000, breakLength: 120, colors: process.stdout.isTTY === true })}\n`);
  else process.stderr.write(outcome.status === 'failed' ? `job ${job} failed: ${outcome.error}\n` : `job ${job} was cancelled\n`);
}

/** What JSON has no form for: bigint as a decimal string, bytes as base64, Map and Set as an object and an array. */
function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  // A Buffer has turned itself into {type: 'Buffer', data: [...]} (its toJSON) before it gets here.
  const buffer = value as { type?: unknown; data?: unknown } | null;
  if (buffer !== null && typeof buffer === 'object' && buffer.type === 'Buffer' && Array.isArray(buffer.data)) return Buffer.from(buffer.data as number[]).toString('base64');
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  return value;
}
