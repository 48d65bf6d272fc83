import { randomBytes } from 'node:crypto';
import { connect } from '../../coord/connect.js';
import { parseConnectionString } from '../../coord/connection-string.js';
import { GroupMembership } from '../../coord/recipes/group-membership.js';
import type { CoordClient } from '../../coord/types.js';
import { isCoordError } from '../../coord/errors.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { DataPlane } from '../../data/data-plane.js';
import { InProcessNetwork, InProcessTransport } from '../../transport/in-process-transport.js';
import { nodeIdOfCertificate } from '../../transport/channel-credentials.js';
import { TcpTransport } from '../../transport/tcp-transport.js';
import type { Transport } from '../../transport/types.js';
import { ClusterSecret, type SecretInput } from '../../util/cluster-secret.js';
import { Emitter } from '../../util/emitter.js';
import { decode } from '../../util/codec.js';
import { log } from '../../util/log.js';
import { jobEnded, jobExists, mayFetchJobBlob } from '../job/blob-access.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import type { JobSpec, KindRef } from '../job/job-spec.js';
import { awaitOutcome, cancelJob, resolveOutcome, type JobOutcome } from '../job/outcome.js';
import { onKeep, validateKeep, type KeepBody } from '../job/result-copies.js';
import { validateEnvelope, type JobEnvelope } from '../node/envelope.js';
import type { NodeEvent } from '../node/node-events.js';
import { isBlobMessage } from '../../data/transfer-protocol.js';
import type { TidepoolNode } from '../node/node.js';
import { taskPoolJob } from '../pool/task-pool-ref.js';
import { holdWhileJobsRun, ProcessHold } from './process-hold.js';
import { assignNamedNode, drainNode, scaleJob } from '../scheduler/job-sizing.js';
import { listNodes, type NodeInfo } from '../scheduler/node-list.js';
import type { TaskRef } from '../worker/task.js';
import { LocalNodes, type LocalNodeOptions } from './local-nodes.js';
import { submitJob, type SubmitOptions } from './submit.js';

/** What `Cluster.on` reports: the nodes' events (tasks, steals, migrations, jobs) and nodes joining and leaving. */
export type ClusterEvent = NodeEvent | { type: 'node-joined'; node: string } | { type: 'node-left'; node: string };

/** How `Cluster.embedded()` starts its in-process nodes. */
export interface EmbeddedClusterOptions extends Omit<LocalNodeOptions, 'secret'> {
  /** Nodes to start with (default 1). */
  nodes?: number;
  /** The cluster secret of its nodes and this client (default: a fresh random one, kept in this process). */
  secret?: SecretInput;
  /** The name of its embedded coordination service (`embedded:NAME` reaches it; default: a fresh random one). */
  name?: string;
}

/** A submitted job (`Cluster.submit`, `Cluster.submitJob`, `Cluster.job`): its id, its result or outcome once it ends, and cancellation. */
export interface JobHandle {
  id: string;
  /** The number of nodes the job asked for (the scheduler assigns them as they are free). */
  nodes: number;
  /** Resolves with the job's result (rejects if the job failed or was cancelled). */
  result<R = unknown>(): Promise<R>;
  outcome(): Promise<JobOutcome>;
  /** Cancels the job (false if it had already ended). */
  cancel(): Promise<boolean>;
}

/** A job of any kind as `Cluster.submitJob` takes it (this client's data plane, if any, carries its blobs). */
export type JobRequest = Omit<SubmitOptions, 'data' | 'nodes' | 'secret'> & {
  /** Nodes the job wants (default: every idle node, at least 1). */
  nodes?: number;
  /**
   * Other modules the job's kind imports (a workflow's function modules). On an embedded cluster, files
   * among them are admitted by its in-process nodes as the task module is; elsewhere they must be files
   * every node has and allows, or packages (docs/security.md).
   */
  modules?: readonly string[];
};

/** How a task-pool job is submitted (`Cluster.submit`): its node range, its read-only input and its kind. */
export interface JobOptions {
  /** Nodes the job wants (default: every idle node, at least 1). */
  nodes?: number;
  /** Node range: start only with this many free at once (default 0), never more than `maxNodes`. */
  minNodes?: number;
  maxNodes?: number;
  /**
   * Read-only data shared by every task of the job (TaskContext.input). Up to 64 KiB it rides in the job
   * spec; larger it goes through the data plane (a Buffer/Uint8Array reaches tasks as a Buffer over shared memory).
   */
  input?: unknown;
  /** A kind built on the task pool that runs the job (default: the task pool itself); see docs/job-kinds.md. */
  kind?: KindRef;
  /**
   * Other modules the job's kind imports (a workflow's function modules). On an embedded cluster, files
   * among them are admitted by its in-process nodes as the task module is; elsewhere they must be files
   * every node has and allows, or packages (docs/security.md).
   */
  modules?: readonly string[];
  /**
   * A memory budget for the tasks one node holds in its pool (bytes; each task reckoned at 512 bytes plus
   * its encoded state): a job whose pool would exceed it fails with a message naming the budget, the job
   * and the node instead of running a node out of memory. None by default. See docs/runtime.md.
   */
  poolMemoryBytes?: number;
}

/**
 * A tidepool cluster as seen from a program: submit jobs, scale them, drain nodes, watch events.
 * `Cluster.embedded()` runs every node in this process on the embedded coordination backend (no
 * external service; its nodes are a LocalNodes launcher's); `Cluster.connect()` attaches to nodes
 * registered on ZooKeeper.
 */
export class Cluster {
  readonly events = new Emitter<{ event: ClusterEvent }>();
  private readonly members: GroupMembership;
  /** This client's data plane: it holds what it submits (large inputs, shipped code) until a node has it. */
  private data: { plane: DataPlane; transport: Transport } | undefined;
  /** Embedded clusters: what keeps the process alive (jobs that run, operations under way); nothing else does. */
  private readonly hold = new ProcessHold();
  private stopHoldingForJobs: (() => void) | undefined;

  private constructor(
    private readonly client: CoordClient,
    /** The in-process nodes of an embedded cluster. */
    private readonly local: LocalNodes | undefined,
    /** The cluster secret (or a read-only monitor credential), if this client was given one. */
    readonly secret: ClusterSecret | undefined,
  ) {
    this.members = new GroupMembership(client, clusterPaths().nodes);
    this.members.on('joined', (m) => this.events.emit('event', { type: 'node-joined', node: m.id }));
    this.members.on('left', (m) => this.events.emit('event', { type: 'node-left', node: m.id }));
    local?.events.on('event', (e) => this.events.emit('event', e));
  }

  /** Starts an in-process cluster of `nodes` nodes, all holding one secret (a fresh random one unless given). */
  static async embedded(opts: EmbeddedClusterOptions = {}): Promise<Cluster> {
    const name = opts.name ?? `cluster-${randomBytes(4).toString('hex')}`;
    const secret = opts.secret === undefined ? ClusterSecret.random() : ClusterSecret.from(opts.secret, 'EmbeddedClusterOptions.secret');
    const client = await connect(`embedded:${name}`, { secret });
    const local = new LocalNodes(name, { ...opts, secret });
    const cluster = new Cluster(client, local, secret);
    await cluster.hold.during(async () => {
      cluster.stopHoldingForJobs = holdWhileJobsRun(client, cluster.hold);
      await cluster.members.watch();
      await local.add(opts.nodes ?? 1);
      await cluster.startData(new InProcessTransport(`client-${randomBytes(3).toString('hex')}`, local.network));
    });
    return cluster;
  }

  /**
   * Attaches to a cluster whose nodes run elsewhere (e.g. `zk://…`). The cluster's `secret` is needed to
   * change anything (submit, scale, cancel: the coordination service refuses a client without it; it signs
   * the jobs) and to read the cluster's state (a read-only monitor credential does for reading). With it
   * (and the operator's certificates, `tls`, when the nodes use them) this client also submits inputs of
   * any size and task modules that are local files (shipped as bundles): it serves them to the job's nodes
   * on the node channel (mutual TLS) until one holds them — unless `serveData` is false (then it has no
   * data plane: no shipping, inputs up to 64 KiB). On `embedded:NAME` it joins that in-process cluster.
   * `connectTimeoutMs`: how long to wait for the coordination service (ZooKeeper's default: 15 s).
   */
  static async connect(connection: string, opts: { secret?: SecretInput; tls?: { cert: string; key: string; ca: string }; host?: string; serveData?: boolean; connectTimeoutMs?: number } = {}): Promise<Cluster> {
    const secret = opts.secret === undefined ? undefined : ClusterSecret.from(opts.secret, 'the secret given to Cluster.connect');
    const client = await connect(connection, { ...(secret ? { secret } : {}), ...(opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: opts.connectTimeoutMs } : {}) });
    // An embedded cluster of this process (by name): its nodes share this process's network, and with the
    // secret this client can start more of them (addNodes).
    const target = parseConnectionString(connection);
    const network = target.backend === 'embedded' ? InProcessNetwork.get(target.name) : undefined;
    const local = target.backend === 'embedded' && secret?.isSecret ? new LocalNodes(target.name, { secret }) : undefined;
    const cluster = new Cluster(client, local, secret);
    try {
      await cluster.members.watch();
    } catch (err) {
      // Refused (NO_AUTH without the secret or a monitor credential): nothing stays open.
      cluster.members.stop();
      await client.close();
      throw err;
    }
    if ((secret?.isSecret || opts.tls !== undefined) && opts.serveData !== false) {
      if (network) {
        await cluster.startData(new InProcessTransport(`client-${randomBytes(4).toString('hex')}`, network));
      } else {
        // With the operator's PKI (`tls`) the client is the node its certificate names; else a fresh client id.
        const nodeId = opts.tls ? nodeIdOfCertificate(opts.tls.cert) : `client-${randomBytes(4).toString('hex')}`;
        await cluster.startData(new TcpTransport({
          nodeId, ...(secret?.isSecret ? { secret: [...secret.accepted] } : {}), ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.host ? { host: opts.host } : {}),
        }));
      }
    }
    return cluster;
  }

  private async startData(transport: Transport): Promise<void> {
    await transport.start();
    const plane = await DataPlane.start({
      client: this.client, transport, root: clusterPaths().root,
      isMember: (peer, job) => mayFetchJobBlob(this.client, peer, job),
      jobExists: (job) => jobExists(this.client, job),
      jobEnded: (job) => jobEnded(this.client, job),
    });
    // A job's leader may ask this client to keep a copy of the job's large final value (the last resort of result-copies.ts).
    transport.onMessage((from, m) => {
      if (isBlobMessage(m) || validateEnvelope(m) !== undefined) return;
      const { type, job, body } = m as JobEnvelope;
      if (type !== 'keep') return;
      const bad = validateKeep(body);
      if (bad) return log.warn('cluster', `dropped a malformed keep message from ${from}: ${bad}`);
      onKeep(plane, job, from, body as KeepBody);
    });
    this.data = { plane, transport };
  }

  get coordination(): CoordClient {
    return this.client;
  }

  on(listener: (event: ClusterEvent) => void): () => void {
    return this.events.on('event', listener);
  }

  /** Starts `count` more in-process nodes (embedded clusters only). */
  addNodes(count: number): Promise<string[]> {
    const local = this.localNodesOf('addNodes');
    return this.hold.during(() => local.add(count));
  }

  /**
   * Submits a task-pool job (task type `ref`, root task state `root`; with `opts.kind`, a kind built on
   * the pool); the scheduler gives it `nodes` nodes as they are free (a job submitted while every node
   * is busy waits in the queue). Resolves once the job is submitted, not finished.
   */
  submit(ref: TaskRef, root: unknown, opts: JobOptions = {}): Promise<JobHandle> {
    const { kind, poolMemoryBytes, ...rest } = opts;
    return this.submitJob({ ...taskPoolJob(ref, root, kind, poolMemoryBytes !== undefined ? { poolMemoryBytes } : {}), ...rest, shipModule: ref.module });
  }

  /** Submits a job of any kind (`kind`, and `kindSpec` as that kind takes it); otherwise as `submit`. */
  async submitJob(job: JobRequest): Promise<JobHandle> {
    const idle = (await this.nodes()).filter((n) => n.assignment === '').length;
    const nodes = job.nodes ?? Math.min(Math.max(1, idle, job.minNodes ?? 0), job.maxNodes ?? Infinity);
    // Embedded nodes share this process and its files: code is shipped only to nodes elsewhere.
    if (!this.secret?.isSecret) throw new Error('submitting a job needs the cluster secret (Cluster.connect(connection, { secret })): it signs the job for the nodes');
    const { shipModule, modules, ...rest } = job;
    // The in-process nodes admit the files this client submits: they share this program, which could import them itself.
    for (const module of [shipModule, job.kind.module, ...(modules ?? [])]) if (module?.startsWith('file:')) this.local?.submittedHere.add(module);
    const release = this.hold.acquire(); // until the outcome is known: the program waits for it
    let spec: JobSpec;
    try {
      spec = await submitJob(this.client, {
        ...rest, nodes, secret: this.secret, ...(this.data ? { data: this.data.plane } : {}), ...(shipModule !== undefined && !this.local ? { shipModule } : {}),
      });
    } catch (err) {
      release();
      throw err;
    }
    return this.handle(spec.id, nodes, release);
  }

  /**
   * A handle on a job submitted earlier, from here or from any other client: its outcome and result
   * (a large result is fetched from the data plane, which needs the cluster secret) and cancel.
   * Rejects when the cluster has no such job.
   */
  async job(jobId: string): Promise<JobHandle> {
    const read = await this.client.getData(jobPaths(jobId).spec).catch((err: unknown) => {
      throw isCoordError(err, 'NO_NODE') ? new Error(`no job ${jobId} in the cluster`) : err;
    });
    return this.handle(jobId, decode<JobSpec>(read.data).nodes.requested);
  }

  /** `release`: what holds the process until the outcome is known (a job submitted here). */
  private handle(jobId: string, nodes: number, release: () => void = () => undefined): JobHandle {
    // A value too large for the coordination service is fetched from the data plane (see job/outcome.ts).
    const obtain = this.data ? (ref: BlobRef, what: string) => this.data!.plane.obtain(ref, jobId, what) : undefined;
    const outcome = awaitOutcome(this.client, jobId).then((o) => resolveOutcome(o, jobId, obtain));
    outcome.then(release, release);
    return {
      id: jobId,
      nodes,
      outcome: () => outcome,
      cancel: () => cancelJob(this.client, jobId),
      result: async <R>() => {
        const o = await outcome;
        if (o.status === 'done') return o.value as R;
        throw new Error(o.status === 'failed' ? `job ${jobId} failed: ${o.error}` : `job ${jobId} was cancelled`);
      },
    };
  }

  /**
   * Stores bytes in this client's data plane for a running job, whose nodes obtain them by reference
   * (`MemberContext.data.obtain`): how a long-lived job is given data after it started. They live as
   * long as the job. Needs a data plane: an embedded cluster, or `Cluster.connect(…, { secret })`.
   */
  async share(bytes: Uint8Array, jobId: string, name = 'blob'): Promise<BlobRef> {
    if (!this.data) throw new Error(`cannot give job ${jobId} ${bytes.length} bytes of ${name}: this client has no data plane (connect with the cluster secret)`);
    return this.data.plane.share(bytes, jobId, name);
  }

  /** Sets the job's node count (idle nodes join; surplus nodes drain). */
  scale(jobId: string, nodes: number) {
    return scaleJob(this.client, jobId, nodes);
  }

  /** Cancels a job: its tasks stop, its nodes are freed, its outcome is `cancelled`. */
  cancel(jobId: string): Promise<boolean> {
    return cancelJob(this.client, jobId);
  }

  /** Gives a named idle node to a job (its desired size grows by one). */
  assign(nodeId: string, jobId: string): Promise<void> {
    return assignNamedNode(this.client, nodeId, jobId);
  }

  /** Drains one node out of its job. */
  drain(nodeId: string): Promise<boolean> {
    return drainNode(this.client, nodeId);
  }

  nodes(): Promise<NodeInfo[]> {
    return listNodes(this.client);
  }

  /** The in-process node objects (embedded clusters). */
  localNodes(): TidepoolNode[] {
    return this.local?.list() ?? [];
  }

  /** Simulates kill -9 of an in-process node: no drain; its session ends, so the cluster sees it vanish. */
  crashNode(nodeId: string): Promise<void> {
    const local = this.localNodesOf('crashNode');
    return this.hold.during(() => local.crash(nodeId));
  }

  /** Stops an in-process node gracefully (drain, then leave). */
  stopNode(nodeId: string): Promise<void> {
    const local = this.localNodesOf('stopNode');
    return this.hold.during(() => local.stop(nodeId));
  }

  private localNodesOf(what: string): LocalNodes {
    if (!this.local) throw new Error(`${what}() needs an embedded cluster (its nodes run in this process)`);
    return this.local;
  }

  /**
   * Stops the local nodes gracefully: running tasks checkpoint and every node leaves its job and
   * the cluster (nothing is handed between nodes that are all stopping; a job that goes on
   * elsewhere recovers their tasks from the ledger).
   */
  close(): Promise<void> {
    return this.hold.during(() => this.closeAll());
  }

  private async closeAll(): Promise<void> {
    this.stopHoldingForJobs?.();
    if (this.data) {
      // What this client submitted must outlive it: wait (bounded) until a node holds it.
      const alone = await this.data.plane.handOff().catch(() => []);
      if (alone.length > 0) log.warn('cluster', `${alone.length} blob(s) submitted from here are held by no node yet; their jobs cannot obtain them now`);
      await this.data.plane.close();
      await this.data.transport.close();
    }
    this.members.stop();
    await this.local?.close();
    await this.client.close();
  }
}
