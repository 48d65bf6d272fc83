/**
 * The resource manager's end-to-end scenario, shared by the embedded and the ZooKeeper tests: three
 * malleable jobs on a pool, one shrunk by draining (task pool), one by `rescale` requests it
 * acknowledges (rescalable kind), a rigid one launched on the nodes a shrink frees; a failure warning
 * vacates a node; every job's count is exact.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CoordClient } from '../../../../src/coord/types.js';
import { submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { listNodes } from '../../../../src/runtime/scheduler/index.js';
import { awaitOutcome } from '../../../../src/runtime/job/outcome.js';
import { jobPaths } from '../../../../src/runtime/job/job-paths.js';
import type { KindRef } from '../../../../src/runtime/job/job-spec.js';
import { taskPoolJob } from '../../../../src/runtime/pool/task-pool-ref.js';
import type { TaskRef } from '../../../../src/runtime/worker/task.js';
import { childEnv } from '../../../support/child-env.js';
import { runCommand } from '../../../support/cli.js';
import type { ClusterSecret } from '../../../../src/util/cluster-secret.js';
import { openGate } from '../../../support/gate.js';
import { waitFor, withDeadline } from '../../../support/wait.js';
import { rootState } from '../../../runtime/apps/compositions.js';

export const HELD: TaskRef = { module: new URL('../../../runtime/apps/held-compositions.ts', import.meta.url).href, export: 'default' };
export const RESCALABLE: KindRef = { module: new URL('./apps/rescalable-kind.ts', import.meta.url).href, export: 'default' };

/**
 * The manager's options for tests of the split-phase mechanics (shrink, launch, vacate, expand): T_gap 0
 * and no cost gate, so each rescale the test waits for is proposed as soon as it is possible. Without
 * this, the adaptive T_gap (10 x the job's measured T_rescale) held a job after a drain that was slow
 * on a loaded machine for longer than the test's deadline. The cost-aware policy has its own tests
 * (cost-policy.test.ts, manager-sticky.test.ts).
 */
export const MECHANICS_ONLY = { tGapMs: 0, costFactor: 0, maxOverhead: 0 } as const;

export interface RescaleLogEntry { type: string; body: { nodes?: string[]; node?: string }; members: string[] }

export async function nodesOf(client: CoordClient, job: string): Promise<string[]> {
  return (await listNodes(client)).filter((n) => n.assignment === job).map((n) => n.id).sort();
}

/** Members of the job as the nodes report it (they have joined). */
export async function membersOf(client: CoordClient, job: string): Promise<string[]> {
  return (await listNodes(client)).filter((n) => n.job === job).map((n) => n.id).sort();
}

export async function rescaleLog(client: CoordClient, job: string): Promise<RescaleLogEntry[]> {
  const dir = `${jobPaths(job).base}/rescale-log`;
  const names = (await client.getChildren(dir).catch(() => [] as string[])).sort();
  return Promise.all(names.map(async (n) => JSON.parse((await client.getData(`${dir}/${n}`)).data.toString('utf8')) as RescaleLogEntry));
}

/** Queues a held-compositions job of size n for the manager, from a client of the cluster holding its secret. */
export async function submit(cluster: { coordination: CoordClient; secret: ClusterSecret | undefined }, n: number, opts: { flexibility: 'rigid' | 'moldable' | 'malleable'; min?: number; max?: number; nodes?: number; kind?: KindRef }) {
  return submitManagedJob(cluster.coordination, {
    ...taskPoolJob(HELD, rootState(n, 300), opts.kind), secret: cluster.secret!, flexibility: opts.flexibility,
    ...(opts.min !== undefined ? { minNodes: opts.min } : {}), ...(opts.max !== undefined ? { maxNodes: opts.max } : {}), ...(opts.nodes !== undefined ? { nodes: opts.nodes } : {}),
  });
}

/** Opens every job's gate and checks each held-compositions count: 2^n. */
export async function finishExactly(client: CoordClient, jobs: Array<{ id: string; n: number }>, timeoutMs = 120_000): Promise<void> {
  for (const j of jobs) await openGate(client, j.id);
  const outcomes = await withDeadline(Promise.all(jobs.map((j) => awaitOutcome(client, j.id))), 'every job to finish', timeoutMs);
  for (const [i, o] of outcomes.entries()) {
    assert.equal(o.status, 'done', `job ${jobs[i]!.id}: ${JSON.stringify(o)}`);
    assert.equal((o as { value: number }).value, 2 ** jobs[i]!.n, `job ${jobs[i]!.id} counts every composition exactly once`);
  }
}

export { waitFor };

const RUN = fileURLToPath(new URL('../../../../src/cli/run.ts', import.meta.url));

/**
 * `tidepool ARGS` from the sources as a process; resolves once it printed a line matching `ready`.
 * `stdin: 'pipe'` leaves its standard input open for the test to write (a failure feed `-`).
 */
export function startCli(args: string[], ready: RegExp, opts: { stdin?: 'pipe' | 'ignore' } = {}): Promise<{ child: ChildProcess; out: () => string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'], env: childEnv({ TIDEPOOL_LOG: 'warn' }) });
  let out = '';
  const exited = new Promise((r) => child.on('exit', r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tidepool ${args[0]} not ready: ${out}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, out: () => out, exited });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`tidepool ${args[0]} exited (${code}): ${out}`)));
  });
}

/** `tidepool ARGS --json` from the sources: must exit 0; its last line, parsed. */
export async function cli(args: string[]): Promise<Record<string, unknown>> {
  const run = await runCommand(process.execPath, ['--import', 'tsx', RUN, ...args], { timeoutMs: 90_000 });
  assert.equal(run.code, 0, `tidepool ${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
