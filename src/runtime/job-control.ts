import { isCoordError } from '../coord/errors.js';
import { joinPath } from '../coord/paths.js';
import { TerminationCoordinator } from '../coord/recipes/termination-detection.js';
import { mkdirp } from '../coord/tree-ops.js';
import type { CoordClient } from '../coord/types.js';
import { watchData } from '../coord/watch.js';
import { decode, encode } from './codec.js';
import { publishOutcome } from './job-coordinator.js';
import { clusterPaths, jobPaths } from './job-paths.js';
import { ROOT_TASK_ID, newJobId, type JobOutcome, type JobSpec } from './job-spec.js';
import { loadTaskType, type TaskRef } from './task.js';
import type { TaskRecord } from './task-record.js';

export interface SubmitOptions {
  ref: TaskRef;
  root: unknown;
  /** Nodes to assign to the job at once (default 1). */
  nodes?: number;
  jobId?: string;
  /** Read-only data shared by every task of the job (TaskContext.input). */
  input?: unknown;
}

/** Creates a job: its spec and its ledger holding the root task (unowned until a node claims it). */
export async function submitJob(client: CoordClient, opts: SubmitOptions, root?: string): Promise<JobSpec> {
  const type = await loadTaskType(opts.ref);
  const id = opts.jobId ?? newJobId();
  const paths = jobPaths(id, root);
  const spec: JobSpec = {
    id, ref: opts.ref, varNames: Object.keys(type.vars ?? {}).sort(), createdAt: Date.now(), nodes: opts.nodes ?? 1,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  };
  await mkdirp(client, paths.base);
  await client.create(paths.spec, encode(spec));
  const rootRecord: TaskRecord = { owner: '', state: opts.root, partial: undefined };
  await new TerminationCoordinator(client, paths.termination).init(ROOT_TASK_ID, encode(rootRecord));
  await scaleJob(client, id, spec.nodes, root);
  return spec;
}

export interface NodeInfo {
  id: string;
  address: string;
  workers: number;
  job: string | null;
  assignment: string;
}

/** The live nodes of the cluster with what they run and what they are assigned to. */
export async function listNodes(client: CoordClient, root?: string): Promise<NodeInfo[]> {
  const p = clusterPaths(root);
  let ids: string[];
  try {
    ids = await client.getChildren(p.nodes);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
  const infos = await Promise.all(ids.map(async (id): Promise<NodeInfo | null> => {
    try {
      const meta = JSON.parse((await client.getData(joinPath(p.nodes, id))).data.toString('utf8')) as { address?: string; workers?: number; job?: string | null };
      let assignment = '';
      try {
        assignment = (await client.getData(joinPath(p.assignments, id))).data.toString('utf8');
      } catch (err) {
        if (!isCoordError(err, 'NO_NODE')) throw err;
      }
      return { id, address: meta.address ?? '', workers: meta.workers ?? 0, job: meta.job ?? null, assignment };
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null; // left meanwhile
      throw err;
    }
  }));
  return infos.filter((n): n is NodeInfo => n !== null).sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Sets the number of nodes assigned to a job: idle nodes are assigned, surplus nodes released
 * (they drain: their tasks move to the remaining nodes). Returns what changed.
 */
export async function scaleJob(client: CoordClient, jobId: string, target: number, root?: string): Promise<{ added: string[]; released: string[]; size: number }> {
  if (!Number.isInteger(target) || target < 0) throw new Error(`node count must be a whole number ≥ 0, got ${target}`);
  const p = clusterPaths(root);
  const nodes = await listNodes(client, root);
  const current = nodes.filter((n) => n.assignment === jobId);
  const added: string[] = [];
  const released: string[] = [];
  if (current.length < target) {
    for (const n of nodes.filter((x) => x.assignment === '')) {
      if (current.length + added.length >= target) break;
      if (await casAssignment(client, joinPath(p.assignments, n.id), '', jobId)) added.push(n.id);
    }
  } else {
    // Release the most recently assigned last-listed nodes first; keep the rest.
    for (const n of current.slice(target).reverse()) {
      if (await casAssignment(client, joinPath(p.assignments, n.id), jobId, '')) released.push(n.id);
    }
  }
  return { added, released, size: current.length + added.length - released.length };
}

/** Asks one node to leave its job (drain); it stays in the cluster, idle. */
export async function drainNode(client: CoordClient, nodeId: string, root?: string): Promise<boolean> {
  const path = joinPath(clusterPaths(root).assignments, nodeId);
  try {
    const { data } = await client.getData(path);
    const job = data.toString('utf8');
    return job !== '' && (await casAssignment(client, path, job, ''));
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) throw new Error(`no node ${nodeId} in the cluster`);
    throw err;
  }
}

async function casAssignment(client: CoordClient, path: string, from: string, to: string): Promise<boolean> {
  try {
    const { data, stat } = await client.getData(path);
    if (data.toString('utf8') !== from) return false;
    await client.setData(path, Buffer.from(to), stat.version);
    return true;
  } catch (err) {
    if (isCoordError(err, 'BAD_VERSION', 'NO_NODE')) return false;
    throw err;
  }
}

/**
 * Cancels a job: its outcome becomes `cancelled` (unless it already has one), its members stop
 * their tasks and leave, and its nodes are free for other jobs. Returns false if the job had
 * already ended; throws if there is no such job.
 */
export async function cancelJob(client: CoordClient, jobId: string, root?: string): Promise<boolean> {
  const paths = jobPaths(jobId, root);
  if (!(await client.exists(paths.spec))) throw new Error(`no job ${jobId} in the cluster`);
  return publishOutcome(client, paths, { status: 'cancelled', finishedAt: Date.now() });
}

/** Resolves with the job's outcome once it has one (watching, never polling). */
export function awaitOutcome(client: CoordClient, jobId: string, root?: string): Promise<JobOutcome> {
  const paths = jobPaths(jobId, root);
  return new Promise((resolve, reject) => {
    const handle = watchData(client, paths.result, (data) => {
      if (!data) return;
      handle.close();
      resolve(decode<JobOutcome>(data.data));
    }, { onEnd: (reason) => reject(new Error(`lost the coordination session while waiting for job ${jobId} (${reason})`)) });
  });
}

/** Ids of the jobs known to the cluster. */
export async function listJobs(client: CoordClient, root?: string): Promise<string[]> {
  try {
    return (await client.getChildren(clusterPaths(root).jobs)).sort();
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
}

/** The node currently leading a job (the first candidate of its election), or null. */
export async function jobLeader(client: CoordClient, jobId: string, root?: string): Promise<string | null> {
  const election = jobPaths(jobId, root).election;
  for (;;) {
    let names: string[];
    try {
      names = (await client.getChildren(election)).sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)));
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
    if (names.length === 0) return null;
    try {
      return (JSON.parse((await client.getData(joinPath(election, names[0]!))).data.toString('utf8')) as { id: string }).id;
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err; // it left meanwhile: read again
    }
  }
}

/** The data of every child of `dir` (children that vanish meanwhile are skipped; a missing dir is empty). */
async function childData(client: CoordClient, dir: string): Promise<Buffer[]> {
  let ids: string[];
  try {
    ids = await client.getChildren(dir);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
  const out: Buffer[] = [];
  for (const id of ids) {
    try {
      out.push((await client.getData(joinPath(dir, id))).data);
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
  }
  return out;
}

/** Owners of the job's live tasks, by node id (for status displays and tests). */
export async function taskOwners(client: CoordClient, jobId: string, root?: string): Promise<Map<string, number>> {
  const owners = new Map<string, number>();
  for (const data of await childData(client, jobPaths(jobId, root).tasks)) {
    const { owner } = decode<TaskRecord>(data);
    owners.set(owner, (owners.get(owner) ?? 0) + 1);
  }
  return owners;
}

/** Nodes that have committed ledger transactions for the job (splits, claims, completions). */
export async function jobCommitters(client: CoordClient, jobId: string, root?: string): Promise<Set<string>> {
  return new Set((await childData(client, jobPaths(jobId, root).txns)).map((d) => decode<{ node: string }>(d).node));
}
