/**
 * Submitting a job: its spec, and what its kind's `prepare` says it needs, created in one
 * transaction, so the scheduler never assigns nodes to a job that is not whole. Large inputs (and
 * whatever `prepare` shares, such as a task pool's large root state) and shipped code go to the
 * submitter's data plane first; the spec holds their references.
 */
import { isCoordError, isRetryable } from '../../coord/errors.js';
import { parentOf } from '../../coord/paths.js';
import { mkdirp, reconnected } from '../../coord/tree-ops.js';
import type { CoordClient, Op } from '../../coord/types.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { INLINE_INPUT_BYTES } from '../../data/blob-values.js';
import { bundleTaskModule, isLocalModule } from '../../data/code-bundle.js';
import type { DataPlane } from '../../data/data-plane.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { encode } from '../../util/codec.js';
import { isInstalledFile } from '../../util/installation.js';
import { jobPaths, type JobPaths } from '../job/job-paths.js';
import { newJobId, type JobSpec, type KindRef } from '../job/job-spec.js';
import { signSpec } from '../job/job-signature.js';
import { loadJobKind } from '../kinds/kind-registry.js';
import { validateNodeRange } from '../scheduler/cluster-view.js';

export interface SubmitOptions {
  /** The job's kind (the task pool: pool/task-pool-ref.ts, whose `taskPoolJob` fills `kind`, `kindSpec` and `label`). */
  kind: KindRef;
  /** The kind's part of the submission, as its `prepare` takes it (the task pool's: `{ ref, root }`). */
  kindSpec: unknown;
  /**
   * The cluster secret: it signs the spec (its kind, kind spec, input, shipped code: every field), which
   * nodes check before they run any of the job's code (job/code-admission.ts).
   */
  secret: ClusterSecret;
  /** What the job runs, for listings (default: the kind's module). */
  label?: string;
  /** Nodes the job wants (default 1); the scheduler assigns them as they are free. */
  nodes?: number;
  /**
   * The job's node range. It starts only when `minNodes` nodes are free at once (default 0: a task
   * pool can start on whatever is free, even wait with none) and never holds more than `maxNodes` (default: no limit).
   */
  minNodes?: number;
  maxNodes?: number;
  jobId?: string;
  /** Read-only data shared by every worker of the job (TaskContext.input); a Buffer/Uint8Array is binary input. */
  input?: unknown;
  /**
   * The submitter's data plane. A large input (or what the kind's `prepare` shares) is stored there, the
   * spec gets a reference, and it is served to the job's nodes; keep it open until a node holds it (`DataPlane.handOff`).
   */
  data?: DataPlane;
  /**
   * A module the kind's spec names that is a local file of this machine (a task module): bundled and shipped
   * through `data`, unless it is a file of tidepool's own installation (its examples, a checkout's tests), which nodes find themselves.
   */
  shipModule?: string;
  /** An external resource manager places the job's nodes (JobSpec.managedBy); the cluster's reconciler leaves it alone. */
  managedBy?: string;
}

/** Stores bytes in the submitter's data plane for the job being submitted. */
type Share = (bytes: Uint8Array, what: string) => Promise<BlobRef>;

/** Creates a job; resolves with its spec as nodes read it. */
export async function submitJob(client: CoordClient, opts: SubmitOptions, root?: string): Promise<JobSpec> {
  const requested = opts.nodes ?? 1;
  const min = opts.minNodes ?? 0;
  if (!opts.secret?.isSecret) throw new Error('submitting a job needs the cluster secret: it signs the job for the nodes (SubmitOptions.secret)');
  validateNodeRange({ nodes: requested, minNodes: min, ...(opts.maxNodes !== undefined ? { maxNodes: opts.maxNodes } : {}) });
  const kind = await loadJobKind(opts.kind); // fails here, clearly, rather than on every node
  const id = opts.jobId ?? newJobId();
  const paths = jobPaths(id, root);
  // Blobs are kept by the data plane for jobs that exist: the job's znode comes before the first one.
  let madeBase = false;
  const data = opts.data;
  const share: Share | undefined = data && (async (bytes, what) => {
    if (!madeBase) await mkdirp(client, paths.base);
    madeBase = true;
    return data.share(bytes, id, what);
  });
  const ship = share && opts.shipModule !== undefined && isLocalModule(opts.shipModule) && !isInstalledFile(opts.shipModule) ? opts.shipModule : undefined;
  const draft: JobSpec = {
    id, kind: opts.kind, kindSpec: opts.kindSpec, createdAt: Date.now(), label: opts.label ?? opts.kind.module,
    nodes: { requested, min, ...(opts.maxNodes !== undefined ? { max: opts.maxNodes } : {}) },
    ...(opts.managedBy !== undefined ? { managedBy: opts.managedBy } : {}),
    ...(data ? { submitter: data.directory.selfPeer } : {}),
    ...(await inputFields(opts.input, share)),
    ...(ship ? { code: { module: ship, bundle: await share!((await bundleTaskModule(ship)).code, `code of ${ship}`) } } : {}),
  };
  const prepared = (await kind.prepare?.(draft, { client, paths, ...(share ? { share } : {}) })) ?? {};
  // Signed after prepare: the signature covers the spec exactly as nodes read it.
  const spec: JobSpec = signSpec(prepared.kindSpec !== undefined ? { ...draft, kindSpec: prepared.kindSpec } : draft, opts.secret);
  const kindSpecBytes = encode(spec.kindSpec).length;
  if (kindSpecBytes > INLINE_INPUT_BYTES) {
    throw new Error(`the ${kind.name} spec of job ${id} is ${kindSpecBytes} bytes encoded, over the ${INLINE_INPUT_BYTES} bytes a job spec holds; ` +
      'large data belongs in the job input (shared through the data plane) or in a file every node can read');
  }
  await createJob(client, paths, prepared.ops ?? [], encode(spec));
  return spec;
}

/**
 * The job's znode (unless it exists: the resource manager keeps its record there, a shared blob made
 * it), the kind's znodes and the spec, in one transaction; refused when the job id is taken.
 */
async function createJob(client: CoordClient, paths: JobPaths, ops: readonly Op[], specBytes: Buffer): Promise<void> {
  await mkdirp(client, parentOf(paths.base));
  const base = await client.exists(paths.base);
  const all: Op[] = [...(base ? [] : [{ op: 'create', path: paths.base } as const]), ...ops, { op: 'create', path: paths.spec, data: specBytes }];
  for (let retried = false; ; retried = true) {
    try {
      await client.multi(all);
      return;
    } catch (err) {
      if (isCoordError(err, 'NODE_EXISTS')) {
        // The job id is taken — unless a retry after a lost connection found its own transaction committed.
        if (retried && (await sameData(client, paths.spec, specBytes))) return;
        throw new Error(`job ${paths.id} exists already`);
      }
      if (!isRetryable(err)) throw err;
      await reconnected(client);
    }
  }
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

/** The spec's input: inline when small, else a reference to it in the submitter's data plane. */
async function inputFields(input: unknown, share: Share | undefined): Promise<Pick<JobSpec, 'input' | 'inputBlob'>> {
  if (input === undefined) return {};
  const binary = input instanceof Uint8Array;
  const bytes = binary ? input : encode(input);
  if (bytes.length <= INLINE_INPUT_BYTES) return { input };
  if (!share) {
    throw new Error(`the job input is ${bytes.length} bytes, over the ${INLINE_INPUT_BYTES} bytes a job spec holds inline; ` +
      'submit it from a process with a data plane (an embedded cluster, or Cluster.connect(zk, { secret }))');
  }
  return { inputBlob: { ref: await share(bytes, 'job input'), form: binary ? 'bytes' : 'msgpack' } };
}
