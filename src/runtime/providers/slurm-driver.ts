import { execFile } from 'node:child_process';
import path from 'node:path';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { nodeArgs, secretText, type NodeDriver, type NodeLaunch, type NodeSpec } from './node-provider.js';
import { shellQuote } from './ssh-driver.js';

export interface SlurmDriverOptions {
  /** The `tidepool` command on Slurm's compute nodes, as shell words (default "tidepool"). */
  command?: string;
  /** More sbatch arguments: ["--partition", "p", "--time", "4:00:00", "--chdir", "/shared/run"], … */
  sbatchArgs?: readonly string[];
  /** The environment of sbatch, squeue and scancel (SLURM_CONF, PATH); sbatch passes it on to the job (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The cluster secret (every accepted one), put in the job's environment as TIDEPOOL_SECRET (never on its command line). */
  secret?: ClusterSecret;
  /** Each node's output goes to `<outputDir>/<node id>-<job id>.out` (default: Slurm's, slurm-<job id>.out in the working directory). */
  outputDir?: string;
  /** How often to ask squeue whether a node's job still runs (default 1000 ms). */
  pollMs?: number;
}

/** States after which a Slurm job no longer runs. */
const ENDED = new Set(['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'PREEMPTED', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE', 'SPECIAL_EXIT']);

interface Job {
  id: string;
  state: string;
  poller: NodeJS.Timeout | undefined;
}

/**
 * The `slurm` provider's driver: each node is a Slurm batch job (`sbatch --wrap "exec tidepool
 * node …"`, one task with as many CPUs as the node has workers) that the controller places on one of
 * its machines; it runs until the node stops. Stopping signals the job's processes with
 * `scancel --signal=TERM --full` (drain) or KILL, and cancels a job still waiting for its allocation.
 * Its end is seen by polling squeue.
 */
export class SlurmDriver implements NodeDriver {
  readonly name = 'slurm';
  private readonly jobs = new Map<string, Job>();
  private closed = false;

  constructor(private readonly opts: SlurmDriverOptions = {}) {}

  private run(program: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(program, args, { env: { ...(this.opts.env ?? process.env), ...extraEnv }, timeout: 60_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${program}: ${stderr.trim() || err.message}`));
        else resolve(stdout);
      });
    });
  }

  async start(id: string, spec: NodeSpec): Promise<NodeLaunch> {
    const command = `exec ${this.opts.command ?? 'tidepool'} ${nodeArgs(id, spec).map(shellQuote).join(' ')}`;
    const args = [
      '--parsable', `--job-name=tidepool-${id}`, '--ntasks=1', `--cpus-per-task=${spec.workers ?? 1}`, '--export=ALL',
      ...(this.opts.outputDir !== undefined ? [`--output=${path.join(this.opts.outputDir, `${id}-%j.out`)}`] : []),
      ...(this.opts.sbatchArgs ?? []),
      '--wrap', command,
    ];
    const secret = this.opts.secret !== undefined ? { TIDEPOOL_SECRET: secretText(this.opts.secret) } : {};
    const out = await this.run('sbatch', args, secret);
    const jobId = out.trim().split(';')[0]!;
    if (!/^\d+$/.test(jobId)) throw new Error(`sbatch answered "${out.trim()}", not a job id`);
    const job: Job = { id: jobId, state: 'PENDING', poller: undefined };
    this.jobs.set(id, job);
    const ended = new Promise<string>((resolve) => {
      const poll = async () => {
        job.poller = undefined;
        const state = await this.stateOf(jobId);
        if (state !== undefined) job.state = state;
        if (state === undefined || ENDED.has(state)) {
          this.jobs.delete(id);
          return resolve(state ?? 'gone from squeue');
        }
        if (!this.closed) job.poller = setTimeout(() => void poll(), this.opts.pollMs ?? 1_000);
      };
      void poll();
    });
    return { where: `slurm job ${jobId}`, ended };
  }

  /** The job's state from squeue (undefined: no longer known to the controller). */
  private async stateOf(jobId: string): Promise<string | undefined> {
    try {
      const state = (await this.run('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%T'])).trim();
      return state === '' ? undefined : state;
    } catch (err) {
      if (/Invalid job id/i.test((err as Error).message)) return undefined;
      return 'UNKNOWN'; // the controller did not answer: ask again later
    }
  }

  async stop(id: string, force: boolean): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) return;
    if (job.state === 'PENDING' || force) {
      if (force) await this.run('scancel', ['--signal=KILL', '--full', job.id]).catch(() => undefined);
      await this.run('scancel', [job.id]);
      return;
    }
    await this.run('scancel', ['--signal=TERM', '--full', job.id]);
  }

  /** Slurm job ids of the nodes, by node id. */
  slurmJobs(): Map<string, string> {
    return new Map([...this.jobs].map(([id, j]) => [id, j.id]));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.jobs.values()) clearTimeout(job.poller);
  }
}
