import { randomBytes } from 'node:crypto';
import { connect, embeddedServer } from '../../coord/connect.js';
import { GroupMembership } from '../../coord/recipes/group-membership.js';
import type { CoordClient } from '../../coord/types.js';
import { isCoordError } from '../../coord/errors.js';
import { decode } from '../../util/codec.js';
import { InProcessNetwork, InProcessTransport } from '../../transport/in-process-transport.js';
import { usableCores } from '../../util/capacity.js';
import { DataPlane } from '../../data/data-plane.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { jobEnded, jobExists, mayFetchJobBlob } from '../job/blob-access.js';
import { resolveOutcome } from '../job/job-result-blob.js';
import { nodeIdOfCertificate } from '../../transport/channel-credentials.js';
import { TcpTransport } from '../../transport/tcp-transport.js';
import type { Transport } from '../../transport/types.js';
import { Emitter } from '../../util/emitter.js';
import { log, type Logger } from '../../util/log.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import type { KindRef } from '../kinds/job-kind.js';
import type { JobOutcome, JobSpec } from '../job/job-spec.js';
import { awaitOutcome, cancelJob } from '../job/outcome.js';
import { listNodes, type NodeInfo } from '../scheduler/node-list.js';
import { submitJob } from './submit.js';
import { assignNamedNode, drainNode, scaleJob } from '../scheduler/job-sizing.js';
import type { NodeEvent } from '../node/node-events.js';
import { newNodeId, TidepoolNode } from '../node/node.js';
import { holdWhileJobsRun, ProcessHold } from '../process-hold.js';
import type { StealPlannerOptions } from '../pool/steal-planner.js';
import type { TaskRef } from '../worker/task.js';

/** What `Cluster.on` reports: the nodes' events (tasks, steals, migrations, jobs) and nodes joining and leaving. */
export type ClusterEvent = NodeEvent | { type: 'node-joined'; node: string } | { type: 'node-left'; node: string };

/** How `Cluster.embedded()` starts its in-process nodes. */
export interface EmbeddedClusterOptions {
  /** Nodes to start with (default 1). */
  nodes?: number;
  /** Worker threads per node (default: cores / nodes, at least 1). */
  workers?: number;
  steal?: StealPlannerOptions;
  seed?: number;
  /** How often each node reports progress events (ms; default 1000, 0 = never). */
  progressIntervalMs?: number;
  /** Each node serves `/metrics`, `/healthz` and `/readyz` on a free port of `host` (see `TidepoolNode.metricsUrl`). */
  metrics?: { host?: string; processMetrics?: boolean };
  /** Where the nodes' log records go (with `node`, `job`, `task` fields); default: the process's (see `setLogger`). */
  logger?: Logger;
}

/** A submitted job (`Cluster.submit`): its id, its result or outcome once it ends, and cancellation. */
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

/** How a job is submitted (`Cluster.submit`): its node range, its read-only input and its kind. */
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
  /** The job's kind (default: the built-in task pool); see docs/job-kinds.md. */
  kind?: KindRef;
}

/**
 * A tidepool cluster as seen from a program: submit jobs, scale them, drain nodes, watch events.
 * `Cluster.embedded()` runs every node in this process on the embedded coordination backend
 * (no external service); `Cluster.connect()` attaches to nodes registered on ZooKeeper.
 */
export class Cluster {
  readonly events = new Emitter<{ event: ClusterEvent }>();
  private readonly local = new Map<string, { node: TidepoolNode; client: CoordClient }>();
  private readonly members: GroupMembership;
  private readonly network: InProcessNetwork | undefined;
  private readonly embeddedName: string | undefined;
  /** This client's data plane: it holds what it submits (large inputs, shipped code) until a node has it. */
  private data: { plane: DataPlane; transport: Transport } | undefined;
  /** Embedded clusters: what keeps the process alive (jobs that run, operations under way); nothing else does. */
  private readonly hold = new ProcessHold();
  private stopHoldingForJobs: (() => void) | undefined;

  private constructor(
    private readonly client: CoordClient,
    private readonly opts: EmbeddedClusterOptions & { embeddedName?: string },
  ) {
    this.embeddedName = opts.embeddedName;
    this.network = opts.embeddedName ? InProcessNetwork.get(opts.embeddedName) : undefined;
    this.members = new GroupMembership(client, clusterPaths().nodes);
    this.members.on('joined', (m) => this.events.emit('event', { type: 'node-joined', node: m.id }));
    this.members.on('left', (m) => this.events.emit('event', { type: 'node-left', node: m.id }));
  }

  /** Starts an in-process cluster of `nodes` nodes. */
  static async embedded(opts: EmbeddedClusterOptions = {}): Promise<Cluster> {
    const name = `cluster-${randomBytes(4).toString('hex')}`;
    const client = await connect(`embedded:${name}`);
    const cluster = new Cluster(client, { ...opts, embeddedName: name });
    await cluster.hold.during(async () => {
      cluster.stopHoldingForJobs = holdWhileJobsRun(client, cluster.hold);
      await cluster.members.watch();
      await cluster.addNodes(opts.nodes ?? 1);
      await cluster.startData(new InProcessTransport(`client-${randomBytes(3).toString('hex')}`, cluster.network));
    });
    return cluster;
  }

  /**
   * Attaches to a cluster whose nodes run elsewhere (e.g. `zk://…`). With the cluster's `secret` (or the
   * operator's certificates, `tls`, when the nodes use them) this client can submit inputs of any size
   * and task modules that are local files (shipped as bundles): it serves them to the job's nodes on the
   * node channel (mutual TLS) until one holds them. `connectTimeoutMs`: how long to wait for the
   * coordination service (ZooKeeper's default: 15 s).
   */
  static async connect(connection: string, opts: { secret?: Buffer | string; tls?: { cert: string; key: string; ca: string }; host?: string; connectTimeoutMs?: number } = {}): Promise<Cluster> {
    const client = await connect(connection, opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: opts.connectTimeoutMs } : {});
    const cluster = new Cluster(client, {});
    await cluster.members.watch();
    if (opts.secret !== undefined || opts.tls !== undefined) {
      // With the operator's PKI (`tls`) the client is the node its certificate names; else a fresh client id.
      const nodeId = opts.tls ? nodeIdOfCertificate(opts.tls.cert) : `client-${randomBytes(4).toString('hex')}`;
      await cluster.startData(new TcpTransport({
        nodeId, ...(opts.secret !== undefined ? { secret: opts.secret } : {}), ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.host ? { host: opts.host } : {}),
      }));
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
    this.data = { plane, transport };
  }

  get coordination(): CoordClient {
    return this.client;
  }

  on(listener: (event: ClusterEvent) => void): () => void {
    return this.events.on('event', listener);
  }

  /** Starts `count` more in-process nodes (embedded clusters only). */
  async addNodes(count: number): Promise<string[]> {
    if (!this.embeddedName || !this.network) throw new Error('addNodes() needs an embedded cluster');
    const workers = this.opts.workers ?? Math.max(1, Math.floor(usableCores() / Math.max(1, this.opts.nodes ?? 1)));
    const started = await this.hold.during(() => Promise.all(Array.from({ length: count }, async () => {
      const client = await connect(`embedded:${this.embeddedName}`);
      const id = newNodeId();
      const node = await TidepoolNode.start({
        client, transport: new InProcessTransport(id, this.network), workers, nodeId: id, holdsProcess: false,
        ...(this.opts.steal ? { steal: this.opts.steal } : {}),
        ...(this.opts.seed !== undefined ? { seed: this.opts.seed + this.local.size } : {}),
        ...(this.opts.progressIntervalMs !== undefined ? { progressIntervalMs: this.opts.progressIntervalMs } : {}),
        ...(this.opts.metrics ? { metrics: { ...this.opts.metrics, port: 0 } } : {}),
        ...(this.opts.logger ? { logger: this.opts.logger } : {}),
      });
      node.on((e) => this.events.emit('event', e));
      this.local.set(node.id, { node, client });
      return node.id;
    })));
    return started;
  }

  /**
   * Submits a job; the scheduler gives it `nodes` nodes as they are free (a job submitted while
   * every node is busy waits in the queue). Resolves once the job is submitted, not finished.
   */
  async submit(ref: TaskRef, root: unknown, opts: JobOptions = {}): Promise<JobHandle> {
    const idle = (await this.nodes()).filter((n) => n.assignment === '').length;
    const nodes = opts.nodes ?? Math.min(Math.max(1, idle, opts.minNodes ?? 0), opts.maxNodes ?? Infinity);
    // Embedded nodes share this process and its files: code is shipped only to nodes elsewhere.
    const data = this.data ? { data: this.data.plane, shipCode: !this.embeddedName } : {};
    const release = this.hold.acquire(); // until the outcome is known: the program waits for it
    let spec: JobSpec;
    try {
      spec = await submitJob(this.client, { ...opts, ref, root, nodes, ...data });
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
    return this.handle(jobId, decode<JobSpec>(read.data).nodes);
  }

  /** `release`: what holds the process until the outcome is known (a job submitted here). */
  private handle(jobId: string, nodes: number, release: () => void = () => undefined): JobHandle {
    // A value too large for the coordination service is fetched from the data plane (job-result-blob.ts).
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
    return [...this.local.values()].map((l) => l.node);
  }

  /** Simulates kill -9 of an in-process node: no drain; its session ends, so the cluster sees it vanish. */
  crashNode(nodeId: string): Promise<void> {
    return this.hold.during(async () => {
      const entry = this.local.get(nodeId);
      if (!entry) throw new Error(`no local node ${nodeId}`);
      this.local.delete(nodeId);
      await entry.node.crash();
      if (this.embeddedName) embeddedServer(this.embeddedName).expire(entry.client.sessionId);
      else await entry.client.close();
    });
  }

  /** Stops a node gracefully (drain, then leave). */
  stopNode(nodeId: string): Promise<void> {
    return this.hold.during(async () => {
      const entry = this.local.get(nodeId);
      if (!entry) throw new Error(`no local node ${nodeId}`);
      this.local.delete(nodeId);
      await entry.node.shutdown();
      await entry.client.close();
    });
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
    await Promise.all([...this.local.values()].map(async ({ node, client }) => {
      await node.shutdown({ handOver: false });
      await client.close();
    }));
    this.local.clear();
    await this.client.close();
  }
}
