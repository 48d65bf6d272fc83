import { isCoordError } from '../../coord/errors.js';
import { TerminationCoordinator } from '../../coord/recipes/termination-detection.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { INLINE_INPUT_BYTES, INLINE_STATE_BYTES } from '../../data/blob-values.js';
import { bundleTaskModule, isLocalModule } from '../../data/code-bundle.js';
import type { DataPlane } from '../../data/data-plane.js';
import { encode } from '../../util/codec.js';
import { jobPaths } from '../job/job-paths.js';
import { ROOT_TASK_ID, newJobId, type JobSpec } from '../job/job-spec.js';
import type { KindRef } from '../kinds/job-kind.js';
import { loadJobKind } from '../kinds/kind-registry.js';
import { validateNodeRange } from '../scheduler/cluster-view.js';
import { loadTaskType, type TaskRef } from '../worker/task.js';
import type { TaskRecord } from '../worker/task-record.js';

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
