import { setMaxListeners } from 'node:events';
import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { ControlChannel, type RequestOptions } from '../../coord/recipes/control-channel.js';
import { TerminationCoordinator } from '../../coord/recipes/termination-detection.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import { decode, encode } from '../../util/codec.js';
import { publishOutcome } from '../job/outcome.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import { ROOT_TASK_ID, newJobId, type JobOutcome, type JobSpec } from '../job/job-spec.js';
import type { KindRef } from '../kinds/job-kind.js';
import { loadJobKind } from '../kinds/kind-registry.js';
import { validateNodeRange } from '../scheduler/cluster-view.js';
import { setDesiredSize } from '../scheduler/job-sizing.js';
import { Reconciler } from '../scheduler/reconciler.js';
import { schedulerPaths } from '../scheduler/scheduler-paths.js';
import { loadTaskType, type TaskRef } from '../worker/task.js';
import type { TaskRecord } from '../worker/task-record.js';
import { INLINE_INPUT_BYTES, INLINE_STATE_BYTES } from '../../data/blob-values.js';
import { bundleTaskModule, isLocalModule } from '../../data/code-bundle.js';
import type { DataPlane } from '../../data/data-plane.js';

export interface SubmitOptions {
  ref: TaskRef;
  root: unknown;
  /** The job's kind (default: the built-in task pool). */
  kind?: KindRef;
  /** Nodes the job wants (default 1); the scheduler assigns them as they are free. */
  nodes?: number;
  /**
   * The job's node range. It starts only when `minNodes` nodes are free at once (default 0: a task
   * pool can start on whatever is free, even wait with none) and never holds more than `maxNodes` (default: no limit).
   */
  minNodes?: number;
  maxNodes?: number;
  jobId?: string;
  /** Read-only data shared by every task of the job (TaskContext.input); a Buffer/Uint8Array is binary input. */
  input?: unknown;
  /**
   * The submitter's data plane. A large input or root state is stored there (the spec and the ledger get
   * a reference) and served to the job's nodes; keep it open until a node holds them (`DataPlane.handOff`).
   */
  data?: DataPlane;
  /** Bundle a task module that is a local file and ship it through `data` (default: whenever `data` is given). */
  shipCode?: boolean;
  /** An external resource manager places the job's nodes (JobSpec.managedBy); the cluster's reconciler leaves it alone. */
  managedBy?: string;
}

/**
 * Creates a job: its spec and its ledger holding the root task (unowned until a node claims it).
 * Large inputs and root states go to the data plane (`opts.data`), the spec and ledger hold references.
 */
export async function submitJob(client: CoordClient, opts: SubmitOptions, root?: string): Promise<JobSpec> {
  const nodes = opts.nodes ?? 1;
  const minNodes = opts.minNodes ?? 0;
  validateNodeRange({ nodes, minNodes, ...(opts.maxNodes !== undefined ? { maxNodes: opts.maxNodes } : {}) });
  const type = await loadTaskType(opts.ref);
  const kind = await loadJobKind(opts.kind); // fails here, clearly, rather than on every node
  const id = opts.jobId ?? newJobId();
  const paths = jobPaths(id, root);
  const ship = opts.data && (opts.shipCode ?? true) && isLocalModule(opts.ref.module);
  const bundle = ship ? await bundleTaskModule(opts.ref.module) : undefined;
  const input = encodedInput(opts);
  let rootRecord = encode({ owner: '', state: opts.root, partial: undefined } satisfies TaskRecord);
  const rootBlob = rootRecord.length > INLINE_STATE_BYTES && opts.data !== undefined;
  // Blobs (shipped code, a large input or root state) are kept by the data plane for jobs that exist: the
  // job's znode comes first. Without any, the job's znode, ledger and spec are one transaction.
  const inline = !bundle && !rootBlob && (input === undefined || input.bytes.length <= INLINE_INPUT_BYTES);
  if (!inline) await mkdirp(client, paths.base);
  const spec: JobSpec = {
    id, ref: opts.ref, varNames: Object.keys(type.vars ?? {}).sort(), createdAt: Date.now(), nodes, minNodes,
    ...(opts.maxNodes !== undefined ? { maxNodes: opts.maxNodes } : {}),
    ...(opts.kind && kind.name !== 'task-pool' ? { kind: opts.kind } : {}),
    ...(opts.managedBy !== undefined ? { managedBy: opts.managedBy } : {}),
    ...(await inputFields(opts, input, id)),
    ...(bundle ? { code: await opts.data!.share(bundle.code, id, `code of ${opts.ref.module}`) } : {}),
  };
  if (rootBlob) {
    const ref = await opts.data!.share(encode({ state: opts.root, partial: undefined }), id, 'root task state');
    rootRecord = encode({ owner: '', state: null, partial: null, ref } satisfies TaskRecord);
  }
  // The ledger (with the root task) exists before the spec, or with it, so the scheduler never assigns nodes to a job without one.
  const ledger = new TerminationCoordinator(client, paths.termination);
  if (inline) {
    // A caller may have made the job's znode already (the resource manager keeps its record there).
    const base = await client.exists(paths.base);
    const specBytes = encode(spec);
    const created = await ledger.init(ROOT_TASK_ID, rootRecord, { parents: base ? [] : [{ op: 'create', path: paths.base }], after: [{ op: 'create', path: paths.spec, data: specBytes }] });
    // Not created: the job id is taken — unless a retry after a lost connection found its own transaction committed.
    const ownRetry = ledger.stats.retries > 0 && (await sameData(client, paths.spec, specBytes));
    if (!created && !ownRetry) throw new Error(`job ${id} exists already`);
  } else {
    await ledger.init(ROOT_TASK_ID, rootRecord);
    await client.create(paths.spec, encode(spec));
  }
  return spec;
}

/** Whether the znode at `path` holds exactly `bytes` (false if it does not exist). */
async function sameData(client: CoordClient, path: string, bytes: Uint8Array): Promise<boolean> {
  try {
    return Buffer.from((await client.getData(path)).data).equals(bytes);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return false;
    throw err;
  }
}

/** The job input as the spec or the data plane would hold it. */
function encodedInput(opts: SubmitOptions): { bytes: Uint8Array; binary: boolean } | undefined {
  if (opts.input === undefined) return undefined;
  const binary = opts.input instanceof Uint8Array;
  return { bytes: binary ? (opts.input as Uint8Array) : encode(opts.input), binary };
}

/** The spec's input: inline when small, else a reference to it in the submitter's data plane. */
async function inputFields(opts: SubmitOptions, input: { bytes: Uint8Array; binary: boolean } | undefined, jobId: string): Promise<Pick<JobSpec, 'input' | 'inputBlob'>> {
  if (input === undefined) return {};
  const { bytes, binary } = input;
  if (bytes.length <= INLINE_INPUT_BYTES) return { input: opts.input };
  if (!opts.data) {
    throw new Error(`the job input is ${bytes.length} bytes, over the ${INLINE_INPUT_BYTES} bytes a job spec holds inline; ` +
      'submit it from a process with a data plane (an embedded cluster, or Cluster.connect(zk, { secret }))');
  }
  return { inputBlob: { ref: await opts.data.share(bytes, jobId, 'job input'), form: binary ? 'bytes' : 'msgpack' } };
}

/** A live node of the cluster (`Cluster.nodes()`). */
export interface NodeInfo {
  id: string;
  /** Where peers reach it (its transport address). */
  address: string;
  workers: number;
  /** The job it takes part in now, or null. */
  job: string | null;
  /** The job the scheduler assigned it to ('' when idle). */
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
    let current: { data: Buffer; stat: { version: number } };
    try {
      current = await client.getData(path);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) throw new Error(`no node ${nodeId} in the cluster`);
      throw err;
    }
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

/**
 * Asks a running job for something through its control channel and resolves with the job's
 * acknowledgement (`status` is understood by every job; other types by the job's kind). Rejects
 * with the job's error, or after `timeoutMs` (the request then stays queued).
 */
export async function requestJob(client: CoordClient, jobId: string, type: string, body: unknown = null, opts: RequestOptions = {}, root?: string): Promise<unknown> {
  const paths = jobPaths(jobId, root);
  if (!(await client.exists(paths.spec))) throw new Error(`no job ${jobId} in the cluster`);
  if (await client.exists(paths.result)) throw new Error(`job ${jobId} has ended`);
  // A job that ends before serving the request never acknowledges it: stop waiting then.
  const abandon = new AbortController();
  const jobEnded = jobEndSignal(client, jobId, paths.result);
  const onEnded = () => abandon.abort(new Error(`job ${jobId} ended before it acknowledged the ${type} request`));
  const onCaller = () => abandon.abort(opts.signal?.reason);
  for (const [signal, listener] of [[jobEnded, onEnded], [opts.signal, onCaller]] as const) {
    if (signal?.aborted) listener();
    else signal?.addEventListener('abort', listener, { once: true });
  }
  try {
    return await new ControlChannel(client, paths.control).request(type, body, { ...opts, signal: abandon.signal });
  } finally {
    jobEnded.removeEventListener('abort', onEnded);
    opts.signal?.removeEventListener('abort', onCaller);
  }
}

/**
 * One watch per client and job on the job's result, shared by every request waiting on it: a
 * ZooKeeper watch stays registered until it fires, so a watch per request (a monitor asks every
 * 200 ms) would pile up for as long as the job runs.
 */
const endWatches = new WeakMap<CoordClient, Map<string, AbortSignal>>();

function jobEndSignal(client: CoordClient, jobId: string, resultPath: string): AbortSignal {
  let byPath = endWatches.get(client);
  if (!byPath) endWatches.set(client, (byPath = new Map()));
  const known = byPath.get(resultPath);
  if (known) return known;
  const ended = new AbortController();
  setMaxListeners(Infinity, ended.signal); // one listener per waiting request
  const forget = () => {
    if (byPath.get(resultPath) === ended.signal) byPath.delete(resultPath);
  };
  const handle = watchData(client, resultPath, (d) => {
    if (!d) return;
    forget();
    handle.close();
    ended.abort(new Error(`job ${jobId} has ended`));
  }, { onEnd: forget });
  byPath.set(resultPath, ended.signal);
  return ended.signal;
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
