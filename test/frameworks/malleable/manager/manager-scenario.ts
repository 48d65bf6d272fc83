/**
 * The resource manager's end-to-end scenario, shared by the embedded and the ZooKeeper tests: three
 * malleable jobs on a pool, one shrunk by draining (task pool), one by `rescale` requests it
 * acknowledges (rescalable kind), a rigid one launched on the nodes a shrink frees; a failure warning
 * vacates a node; every job's count is exact.
 */
import assert from 'node:assert/strict';
import type { CoordClient } from '../../../../src/coord/types.js';
import { submitManagedJob } from '../../../../src/frameworks/malleable/manager/manager-store.js';
import { listNodes, awaitOutcome } from '../../../../src/runtime/job-control.js';
import { jobPaths } from '../../../../src/runtime/job-paths.js';
import type { KindRef } from '../../../../src/runtime/kinds/job-kind.js';
import type { TaskRef } from '../../../../src/runtime/task.js';
import { openGate } from '../../../support/gate.js';
import { waitFor, withDeadline } from '../../../support/wait.js';
import { rootState } from '../../../runtime/apps/compositions.js';

export const HELD: TaskRef = { module: new URL('../../../runtime/apps/held-compositions.ts', import.meta.url).href, export: 'default' };
export const RESCALABLE: KindRef = { module: new URL('./apps/rescalable-kind.ts', import.meta.url).href, export: 'default' };

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

export async function submit(client: CoordClient, n: number, opts: { flexibility: 'rigid' | 'moldable' | 'malleable'; min?: number; max?: number; nodes?: number; kind?: KindRef }) {
  return submitManagedJob(client, {
    ref: HELD, root: rootState(n, 300), flexibility: opts.flexibility, ...(opts.kind ? { kind: opts.kind } : {}),
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
