import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient, Op } from '../../coord/types.js';
import { decode } from '../../util/codec.js';
import { jobPaths } from '../job/job-paths.js';
import type { JobSpec } from '../job/job-spec.js';
import { nodeRangeOf, parseSize, schedulerPaths } from './scheduler-paths.js';
import { readOrNull } from '../../coord/znode-reads.js';
import { listNodes } from './node-list.js';
import { Reconciler } from './reconciler.js';

/**
 * What operators and the public API tell the scheduler: a job's desired size, a named node to give
 * to a job, a node to take out of its job. They write intent; the reconciler (or, for a named node
 * or a drained one, this very write) moves the nodes.
 */

/** Sets the number of nodes a job wants (the scheduler clamps it into [minNodes, maxNodes]). */
export async function setDesiredSize(client: CoordClient, jobId: string, nodes: number, root?: string): Promise<void> {
  if (!Number.isInteger(nodes) || nodes < 0) throw new Error(`desired size must be a whole number ≥ 0, got ${nodes}`);
  await readSpec(client, jobId, root);
  const path = schedulerPaths(root).size(jobId);
  const data = Buffer.from(String(nodes));
  for (;;) {
    try {
      await client.setData(path, data);
      return;
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
    try {
      await client.create(path, data);
      return;
    } catch (err) {
      if (!isCoordError(err, 'NODE_EXISTS')) throw err; // created meanwhile: set it
    }
  }
}

/**
 * Assigns the idle node `nodeId` to `jobId` and, in the same transaction, grows the job's desired
 * size by one, so the reconciler sees the node as wanted and does not release it as surplus. The
 * transaction bumps the scheduler epoch too: a reconciler then reads both changes together rather
 * than planning between its watches' deliveries of the two.
 * Throws when the node is not live or not idle, or the job is unknown, finished or at its maximum.
 */
export async function assignNamedNode(client: CoordClient, nodeId: string, jobId: string, root?: string): Promise<void> {
  const p = schedulerPaths(root);
  const assignment = joinPath(p.assignments, nodeId);
  await mkdirp(client, p.epoch);
  for (let attempt = 0; attempt < 20; attempt++) {
    const spec = await readSpec(client, jobId, root);
    if (await client.exists(jobPaths(jobId, root).result)) throw new Error(`job ${jobId} has finished`);
    const current = await readAssignment(client, assignment, nodeId);
    const holder = current.data.toString('utf8');
    if (holder === jobId) return;
    if (holder !== '') throw new Error(`node ${nodeId} is assigned to job ${holder}; drain it first`);
    const size = await readOrNull(client, p.size(jobId));
    const desired = (size && parseSize(size.data)) ?? spec.nodes.requested;
    const { maxNodes } = nodeRangeOf(spec);
    if (desired + 1 > maxNodes) throw new Error(`job ${jobId} already wants its maximum of ${maxNodes} nodes`);
    const next = Buffer.from(String(desired + 1));
    const ops: Op[] = [
      { op: 'check', path: joinPath(p.nodes, nodeId), version: -1 }, // the node is live (its membership exists)
      { op: 'setData', path: assignment, data: Buffer.from(jobId), version: current.stat.version },
      size ? { op: 'setData', path: p.size(jobId), data: next, version: size.stat.version } : { op: 'create', path: p.size(jobId), data: next },
      { op: 'setData', path: p.epoch, data: Buffer.alloc(0) },
    ];
    if (!(await client.exists(p.started(jobId)))) ops.push({ op: 'create', path: p.started(jobId) });
    try {
      await client.multi(ops);
      return;
    } catch (err) {
      if (isCoordError(err, 'NO_NODE') && err.opIndex === 0) throw new Error(`node ${nodeId} is not live`);
      if (!isCoordError(err, 'BAD_VERSION', 'NODE_EXISTS', 'NO_NODE')) throw err;
      // Something moved between the reads and the write (the reconciler, another caller): read again.
    }
  }
  throw new Error(`could not assign node ${nodeId} to job ${jobId}: the cluster kept changing`);
}

/** A node's assignment znode (the job it is assigned to, '' when idle) with its version. */
async function readAssignment(client: CoordClient, path: string, nodeId: string): Promise<{ data: Buffer; stat: { version: number } }> {
  try {
    return await client.getData(path);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) throw new Error(`no node ${nodeId} in the cluster`);
    throw err;
  }
}

async function readSpec(client: CoordClient, jobId: string, root?: string): Promise<JobSpec> {
  try {
    return decode<JobSpec>((await client.getData(jobPaths(jobId, root).spec)).data);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) throw new Error(`no job ${jobId}`);
    throw err;
  }
}

/**
 * Sets the number of nodes a job wants; the scheduler assigns idle nodes to it or releases surplus
 * ones (they drain: their tasks move to the remaining nodes), within the job's node range. Runs one
 * scheduling pass itself, so the change is made by the time this resolves even where no elected
 * scheduler runs yet, and returns what changed.
 */
export async function scaleJob(client: CoordClient, jobId: string, target: number, root?: string): Promise<{ added: string[]; released: string[]; size: number }> {
  if (!Number.isInteger(target) || target < 0) throw new Error(`node count must be a whole number ≥ 0, got ${target}`);
  const before = new Set((await listNodes(client, root)).filter((n) => n.assignment === jobId).map((n) => n.id));
  await setDesiredSize(client, jobId, target, root);
  await reconcileOnce(client, root);
  const after = (await listNodes(client, root)).filter((n) => n.assignment === jobId).map((n) => n.id);
  return { added: after.filter((id) => !before.has(id)), released: [...before].filter((id) => !after.includes(id)), size: after.length };
}

/** One scheduling pass from this session (fenced like any other reconciler's). */
async function reconcileOnce(client: CoordClient, root?: string): Promise<void> {
  const reconciler = new Reconciler(client, root ? { root } : {});
  try {
    await reconciler.start();
  } finally {
    reconciler.stop();
  }
}

/**
 * Asks one node to leave its job (drain); it stays in the cluster, idle. The job's desired size
 * shrinks by one in the same transaction (which also fences concurrent scheduling plans), so the
 * scheduler does not hand the job another node — unless that would put it below its minimum.
 */
export async function drainNode(client: CoordClient, nodeId: string, root?: string): Promise<boolean> {
  const sp = schedulerPaths(root);
  const path = joinPath(sp.assignments, nodeId);
  await mkdirp(client, sp.epoch);
  for (let attempt = 0; attempt < 20; attempt++) {
    const current = await readAssignment(client, path, nodeId);
    const job = current.data.toString('utf8');
    if (job === '') return false;
    const nodes = await listNodes(client, root);
    const size = Math.max(0, nodes.filter((n) => n.assignment === job).length - 1);
    const sizePath = sp.size(job);
    const exists = await client.exists(sizePath);
    try {
      await client.multi([
        { op: 'setData', path, data: Buffer.alloc(0), version: current.stat.version },
        exists ? { op: 'setData', path: sizePath, data: Buffer.from(String(size)) } : { op: 'create', path: sizePath, data: Buffer.from(String(size)) },
        { op: 'setData', path: sp.epoch, data: Buffer.alloc(0) },
      ]);
      return true;
    } catch (err) {
      if (!isCoordError(err, 'BAD_VERSION', 'NODE_EXISTS', 'NO_NODE')) throw err; // moved meanwhile: read again
    }
  }
  throw new Error(`could not drain node ${nodeId}: the cluster kept changing`);
}
