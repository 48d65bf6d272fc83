import { randomBytes } from 'node:crypto';
import { isCoordError, isRetryable } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { GlobalVariables } from '../../coord/recipes/global-variables.js';
import { ControlChannel, type ControlRequest, type ControlServer } from '../../coord/recipes/control-channel.js';
import { GroupMembership } from '../../coord/recipes/group-membership.js';
import { LeaderElection } from '../../coord/recipes/leader-election.js';
import { mkdirp, reconnected } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData, type WatchHandle } from '../../coord/watch.js';
import type { Transport } from '../../transport/types.js';
import { DataPlane } from '../../data/data-plane.js';
import type { ObjectStoreOptions } from '../../data/object-store.js';
import { jobExists, mayFetchJobBlob } from '../job/blob-access.js';
import { isBlobMessage } from '../../data/transfer-protocol.js';
import { Emitter } from '../../util/emitter.js';
import { log as rootLog, logTo, type Log, type Logger } from '../../util/log.js';
import { Rng } from '../../util/rng.js';
import { decode } from '../../util/codec.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { secureClusterRoot } from '../job/cluster-root.js';
import { CodeAdmission, CodeRefused } from '../job/code-admission.js';
import { finishJob, publishOutcome, serveControl, type ShareBytes } from '../job/outcome.js';
import { onKeep, sharedOnTwoNodes, validateKeep, type KeepBody } from '../job/result-copies.js';
import { clusterPaths, jobPaths, type JobPaths } from '../job/job-paths.js';
import type { JobSpec } from '../job/job-spec.js';
import { ZERO_COUNTERS, type JobKind, type LeaderRole, type MemberContext, type MemberRole } from '../kinds/job-kind.js';
import { loadJobKind } from '../kinds/kind-registry.js';
import { validateEnvelope, type JobEnvelope } from './envelope.js';
import type { NodeEvent } from './node-events.js';
import { StatsPublisher, statsOfJob } from './node-stats.js';
import type { MetricsRegistry } from '../metrics/metrics-registry.js';
import { NodeObservability, type NodeMetricsOptions } from './node-observability.js';
import { recordTally } from '../job/tallies.js';
import { SchedulerService } from '../scheduler/scheduler-service.js';
import { WorkerPool, type WorkerEvent } from '../worker/worker-pool.js';

export interface NodeOptions {
  /** The node's coordination session, opened with the cluster secret (connect(connection, { secret })). */
  client: CoordClient;
  transport: Transport;
  /** The cluster secret: the node checks job specs' signatures with it (code-admission.ts). */
  secret: ClusterSecret;
  /** Locations of code the operator allows beyond the built-ins and tidepool's installation (file: URLs of directories). */
  allowCode?: readonly string[];
  /** In-process nodes of an embedded cluster: the file modules its own client submitted (CodeAdmissionOptions.submittedHere). */
  submittedHere?: ReadonlySet<string>;
  /** Worker threads (default: one per core). */
  workers: number;
  nodeId?: string;
  /** Root path of the cluster in the coordination service. */
  root?: string;
  /** Settings for job kinds, by kind name (a kind reads its own as MemberContext.options; e.g. `{ 'task-pool': { steal: {...} } }`). */
  kindOptions?: Record<string, unknown>;
  /** Seed for the node's random choices (victims), for reproducible tests. */
  seed?: number;
  /** How often a node in a job reports its progress and publishes its stats (ms; 0 = never). Default 1000. */
  progressIntervalMs?: number;
  /** Stand in the cluster's scheduler election (default true): the elected node assigns nodes to jobs. */
  scheduler?: boolean;
  /** The node's data plane: its object store's limits, and how often it drops local copies of collected blobs (ms; default 60 000, 0 = never). */
  data?: { store?: ObjectStoreOptions; collectEveryMs?: number };
  /** Serve `/metrics`, `/healthz` and `/readyz` on a port of the node's own (off without it). */
  metrics?: NodeMetricsOptions;
  /** Where this node's log records go (with `node`, `job`, `task` fields); default: the process's (see `setLogger`). */
  logger?: Logger;
  /**
   * Whether the node's worker threads keep the process alive (default true). An embedded cluster's nodes
   * do not: the cluster holds the process while it has jobs and lets a program end once they are done.
   */
  holdsProcess?: boolean;
}

interface Participation {
  spec: JobSpec;
  paths: JobPaths;
  kind: JobKind;
  role: MemberRole;
  ctx: MemberContext;
  vars: GlobalVariables;
  members: GroupMembership;
  election: LeaderElection;
  leaderRole: LeaderRole | undefined;
  control: ControlServer | undefined;
  resultWatch: WatchHandle | undefined;
  leaving: Promise<void> | undefined;
  progress: NodeJS.Timeout | undefined;
  /** Records with this job's and this node's ids. */
  log: Log;
}

export function newNodeId(): string {
  return `n-${randomBytes(4).toString('hex')}`;
}

/**
 * A tidepool node: a process (or, embedded, an object) with worker threads that registers in the
 * cluster, follows its job assignment, and takes part in one job at a time through the job's kind
 * (its member role, and its leader role while the node leads the job).
 */
export class TidepoolNode {
  readonly id: string;
  readonly events = new Emitter<{ event: NodeEvent }>();
  private readonly client: CoordClient;
  private readonly transport: Transport;
  private readonly paths: ReturnType<typeof clusterPaths>;
  private readonly workers: WorkerPool;
  private readonly cluster: GroupMembership;
  private readonly rng: Rng;
  private readonly stats: StatsPublisher;
  private job: Participation | undefined;
  private assignmentWatch: WatchHandle | undefined;
  private assignmentQueue = Promise.resolve();
  private scheduler: SchedulerService | undefined;
  private dataPlane: DataPlane | undefined;
  private collectTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Per job: nodes asked to keep a copy of its final value, which may fetch its blobs from here meanwhile. */
  private readonly keepers = new Map<string, Set<string>>();
  private readonly observed: NodeObservability;
  private readonly log: Log;
  private code: CodeAdmission;

  private constructor(private readonly opts: NodeOptions) {
    this.id = opts.nodeId ?? newNodeId();
    this.client = opts.client;
    this.transport = opts.transport;
    this.paths = clusterPaths(opts.root);
    this.code = this.admission(opts.secret);
    this.rng = new Rng(opts.seed ?? (Math.random() * 2 ** 32) >>> 0);
    this.workers = new WorkerPool(opts.workers, (ev) => this.onWorkerEvent(ev), { holdsProcess: opts.holdsProcess ?? true });
    this.cluster = new GroupMembership(this.client, this.paths.nodes);
    this.stats = new StatsPublisher(this.client, joinPath(this.paths.stats, this.id), () => this.currentStats(), opts.progressIntervalMs ?? 1_000);
    this.log = (opts.logger ? logTo(opts.logger) : rootLog).child({ node: this.id });
    this.observed = new NodeObservability(this.id, opts.metrics, () => this.currentStats(), () => this.client.state);
  }

  /** Starts the workers and the transport, registers in the cluster, and follows the assignment. */
  static async start(opts: NodeOptions): Promise<TidepoolNode> {
    const node = new TidepoolNode(opts);
    try {
      await node.init();
    } catch (err) {
      await node.observed.close();
      throw err;
    }
    return node;
  }

  get currentJob(): string | undefined {
    return this.job?.spec.id;
  }

  get isLeader(): boolean {
    return this.job?.election.isLeader ?? false;
  }

  /** Whether this node runs its job's leader duties now (kind leader code, control channel). */
  get leading(): boolean {
    return this.job?.control !== undefined;
  }

  get workerCount(): number {
    return this.workers.size;
  }

  /** `http://host:port` of `/metrics`, `/healthz` and `/readyz` (with `NodeOptions.metrics`). */
  get metricsUrl(): string | undefined {
    return this.observed.url;
  }

  /** The node's metrics registry (with `NodeOptions.metrics`): add figures of your own, or read its text. */
  get metrics(): MetricsRegistry | undefined {
    return this.observed.registry;
  }

  /** Queue depth and running tasks of the current job (for status and the dashboard). */
  load() {
    const job = this.job;
    return job ? { job: job.spec.id, ...(job.role.load?.() ?? { running: 0, pooled: 0 }), stats: job.role.counters?.() ?? { ...ZERO_COUNTERS } } : undefined;
  }

  on(listener: (event: NodeEvent) => void): () => void {
    return this.events.on('event', listener);
  }

  /**
   * Leaves the current job gracefully: every task moves to the remaining members first (or, with
   * `handOver: false`, is checkpointed and left in the ledger for whoever runs the job next).
   */
  async drain(opts: { handOver?: boolean } = {}): Promise<void> {
    const job = this.job;
    if (!job) return;
    const mine = this.observed.phase === 'ready'; // (a shutdown drains too, and stays not ready)
    if (mine) this.observed.phase = 'draining';
    try {
      await this.leave(job, 'drained', opts);
    } finally {
      if (mine && this.observed.phase === 'draining') this.observed.phase = 'ready';
    }
  }

  /** Drains, then leaves the cluster and stops. */
  async shutdown(opts: { handOver?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.observed.phase = 'draining';
    // No new assignment is followed, and one under way ends first: a job joined while shutting down is drained
    // too, not left behind with this node gone from the cluster (its join then failed on the cluster's membership).
    this.assignmentWatch?.close();
    await this.assignmentQueue;
    await this.drain(opts);
    this.closed = true;
    await this.scheduler?.stop();
    await this.stats.stop();
    this.cluster.stop();
    await this.cluster.leave().catch(() => undefined);
    await this.workers.close();
    await this.closeData();
    await this.transport.close();
    await this.observed.close();
  }

  /**
   * Stops abruptly, as kill -9 would: no drain, no goodbye. The caller closes or expires the
   * session so that the rest of the cluster notices (tests use this for crash scenarios).
   */
  async crash(): Promise<void> {
    this.closed = true;
    void this.scheduler?.stop();
    void this.stats.stop();
    this.job?.role.stop();
    this.assignmentWatch?.close();
    await this.workers.close();
    await this.closeData();
    await this.transport.close();
    await this.observed.close();
  }

  /**
   * Takes another cluster secret (a rotation, `tidepool node` on SIGHUP): its coordination session presents
   * the new credentials and gives new znodes their list, and job specs signed with any secret it lists are
   * admitted. The node channel's credentials are the transport's (TcpTransport.setCredentials).
   */
  useSecret(secret: ClusterSecret): void {
    this.client.useSecret(secret);
    this.code = this.admission(secret);
  }

  private admission(secret: ClusterSecret): CodeAdmission {
    return new CodeAdmission({ secret, ...(this.opts.allowCode ? { allow: this.opts.allowCode } : {}), ...(this.opts.submittedHere ? { submittedHere: this.opts.submittedHere } : {}) });
  }

  /** The node's data plane (blobs of its jobs), once started. */
  get data(): DataPlane | undefined {
    return this.dataPlane;
  }

  private async closeData(): Promise<void> {
    clearInterval(this.collectTimer);
    await this.dataPlane?.close().catch((err: unknown) => this.log.warn('node', 'closing the data plane failed', err));
  }

  // ---- setup -------------------------------------------------------------------------

  private async init(): Promise<void> {
    await this.observed.listen();
    await this.workers.start();
    this.transport.onMessage((from, m) => this.onMessage(from, m));
    await this.transport.start();
    // The first coordination request: nothing joins a cluster whose root this secret does not protect.
    try {
      await secureClusterRoot(this.client, this.paths.root, this.opts.secret);
    } catch (err) {
      await this.workers.close();
      await this.transport.close();
      await this.observed.close();
      throw err;
    }
    // Blob frames reach the data plane through onMessage (one routing rule), not a subscription of its own.
    this.dataPlane = await DataPlane.start({
      client: this.client, transport: this.transport, root: this.paths.root, subscribe: false,
      isMember: (peer, job) => (this.keepers.get(job)?.has(peer) ?? false) || mayFetchJobBlob(this.client, peer, job, this.paths.root),
      jobExists: (job) => jobExists(this.client, job, this.paths.root),
      ...(this.opts.data?.store ? { store: this.opts.data.store } : {}),
    });
    const every = this.opts.data?.collectEveryMs ?? 60_000;
    if (every > 0) {
      this.collectTimer = setInterval(() => {
        this.dataPlane?.collectLocal().catch((err: unknown) => this.log.warn('node', 'local blob collection failed', err));
      }, every);
      this.collectTimer.unref();
    }
    await mkdirp(this.client, this.paths.assignments);
    await this.cluster.join(this.id, { address: this.transport.address, workers: this.workers.size, job: null });
    await this.cluster.watch();
    const assignment = joinPath(this.paths.assignments, this.id);
    try {
      await this.client.create(assignment, Buffer.alloc(0));
    } catch (err) {
      if (!isCoordError(err, 'NODE_EXISTS')) throw err;
    }
    this.assignmentWatch = watchData(this.client, assignment, (data) => {
      const jobId = data ? data.data.toString('utf8') : '';
      this.assignmentQueue = this.assignmentQueue.then(() => this.followAcrossLosses(jobId)).catch((err: unknown) => {
        this.log.error('node', `could not follow assignment to "${jobId}"`, err);
      });
    });
    await this.assignmentWatch.ready;
    this.stats.start();
    await this.stats.publish();
    if (this.opts.scheduler !== false) {
      this.scheduler = new SchedulerService(this.client, { id: this.id, root: this.paths.root });
      await this.scheduler.start();
    }
    this.observed.phase = 'ready';
  }

  /**
   * Follows the assignment again after each connection loss, once the session is back: a join cut
   * short by one (a ZooKeeper leader election, say) would otherwise leave the node assigned to a job it
   * never takes part in, and the job waiting for it forever.
   */
  private async followAcrossLosses(jobId: string): Promise<void> {
    for (;;) {
      try {
        return await this.follow(jobId);
      } catch (err) {
        if (this.closed || !isRetryable(err)) throw err;
        this.log.warn('node', `following the assignment to "${jobId}" lost the connection; again once reconnected`, err);
        await reconnected(this.client);
      }
    }
  }

  /** Joins or leaves jobs to match the assignment. */
  private async follow(jobId: string): Promise<void> {
    if (this.closed) return;
    if (this.job && this.job.spec.id !== jobId) await this.leave(this.job, 'drained');
    if (jobId !== '' && !this.job) await this.join(jobId);
  }

  private async join(jobId: string): Promise<void> {
    const paths = jobPaths(jobId, this.paths.root);
    let spec: JobSpec;
    try {
      spec = decode<JobSpec>((await this.client.getData(paths.spec)).data);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return this.log.child({ job: jobId }).warn('node', `assigned to unknown job ${jobId}`);
      throw err;
    }
    if (await this.client.exists(paths.result)) return; // already over
    try {
      this.code.admitJob(spec, jobId);
    } catch (err) {
      // Nothing of the job was imported; it fails here and this node stays free for others.
      const error = `node ${this.id} refused job ${jobId}: ${err instanceof Error ? err.message : String(err)}`;
      this.log.child({ job: jobId }).error('node', error);
      await publishOutcome(this.client, paths, { status: 'failed', error, finishedAt: Date.now() }).catch(() => false);
      return;
    }
    const kind = await loadJobKind(spec.kind);
    const vars = new GlobalVariables(this.client, paths.vars);
    const members = new GroupMembership(this.client, paths.members);
    const options = this.opts.kindOptions?.[kind.name];
    const jobLog = this.log.child({ job: jobId });
    const ctx: MemberContext = {
      metrics: this.observed.forKind(kind.name), log: jobLog,
      nodeId: this.id, spec, client: this.client, paths, workers: this.workers, vars, rng: this.rng, membership: members, code: this.code,
      ...(this.dataPlane ? { data: this.dataPlane } : {}),
      ...(options !== undefined ? { options } : {}),
      send: (to, body) => this.send(to, { type: 'job', job: jobId, body }),
      peers: () => [...members.view().keys()].filter((id) => id !== this.id),
      report: (e) => this.emit({ ...e, job: jobId, node: this.id }),
      fail: (error) => this.failJob(paths, error),
    };
    let role: MemberRole;
    try {
      role = await kind.member(ctx);
    } catch (err) {
      // A connection loss fails no job: the join is tried again once the session is back (followAcrossLosses).
      if (isRetryable(err)) {
        vars.stop();
        throw err;
      }
      // A module of the kind's spec its code admission refused (the task module, say): nothing of it was imported.
      const error = err instanceof CodeRefused
        ? `node ${this.id} refused job ${jobId}: ${err.message}`
        : `job kind ${kind.name} could not start on node ${this.id}: ${err instanceof Error ? err.message : String(err)}`;
      jobLog.error('node', error);
      await publishOutcome(this.client, paths, { status: 'failed', error, finishedAt: Date.now() }).catch(() => false);
      return;
    }
    const election = new LeaderElection(this.client, paths.election, { id: this.id, data: null });
    const job: Participation = {
      spec, paths, kind, role, ctx, vars, members, election, leaderRole: undefined, control: undefined,
      resultWatch: undefined, leaving: undefined, progress: undefined, log: jobLog,
    };
    this.job = job;
    try {
      members.on('joined', () => role.peersJoined?.());
      members.on('left', (m) => role.peerLeft?.(m.id));
      await members.join(this.id, { address: this.transport.address, workers: this.workers.size });
      await members.watch();
      election.on('elected', () => void this.lead(job));
      // A leader whose session expired must stop acting: another node is (or will be) elected.
      election.on('lost', () => this.stopLeading(job));
      await election.start();
      job.resultWatch = watchData(this.client, paths.result, (data) => {
        if (data && this.job === job) void this.leave(job, 'finished');
      });
      await this.cluster.update({ address: this.transport.address, workers: this.workers.size, job: jobId });
    } catch (err) {
      // Undone, so that following the assignment again starts afresh.
      await this.undoJoin(job);
      throw err;
    }
    this.emit({ type: 'job-joined', node: this.id, job: jobId });
    void this.stats.publish();
    const every = this.opts.progressIntervalMs ?? 1_000;
    if (every > 0) {
      job.progress = setInterval(() => this.reportProgress(job), every);
      job.progress.unref();
    }
    role.peersJoined?.();
  }

  /** Runs the kind's leader code and serves the job's control channel while this node leads the job. */
  private async lead(job: Participation): Promise<void> {
    if (this.job !== job || job.leaving || job.leaderRole) return;
    this.emit({ type: 'leader', node: this.id, job: job.spec.id });
    if (job.kind.leader) {
      try {
        const role = await job.kind.leader({ ...job.ctx, member: job.role, finish: (o) => finishJob(this.client, job.paths, o, this.shareFor(job.spec.id)) });
        if (this.job !== job || job.leaving || !job.election.isLeader) return role.stop();
        job.leaderRole = role;
      } catch (err) {
        job.log.error('node', `the leader of job ${job.spec.id} could not start`, err);
      }
    }
    if (this.job !== job || job.leaving || !job.election.isLeader) return;
    job.control = new ControlChannel(this.client, job.paths.control).serve((req) => this.onControl(job, req));
  }

  /**
   * Stores a job's large bytes (its final value) on this node's data plane, if it has one, and has a
   * second node keep a copy before the outcome referencing them is published (result-copies.ts).
   */
  private shareFor(jobId: string): ShareBytes | undefined {
    const data = this.dataPlane;
    if (!data) return undefined;
    const job = this.job?.spec.id === jobId ? this.job : undefined;
    const submitter = job?.spec.submitter;
    return sharedOnTwoNodes({
      jobId, data,
      candidates: () => {
        const inJob = [...(job?.members.view().keys() ?? [])].filter((id) => id !== this.id);
        const others = [...this.cluster.view().keys()].filter((id) => id !== this.id && !inJob.includes(id));
        // Last, the submitting client's data plane (not a node: reached at the address its spec gives).
        const client = submitter && submitter.nodeId !== this.id && !inJob.includes(submitter.nodeId) && !others.includes(submitter.nodeId) ? [submitter.nodeId] : [];
        return [...inJob, ...others, ...client];
      },
      ask: (to, body) => {
        const message = { type: 'keep', job: jobId, body } as const;
        return to === submitter?.nodeId && !this.cluster.view().has(to) ? this.transport.send(submitter, message) : this.send(to, message);
      },
      // One node at a time is asked (the job's outcome is written once): the permit is that node's alone.
      permit: (peer) => {
        this.keepers.set(jobId, new Set([peer]));
        return () => this.keepers.delete(jobId);
      },
    });
  }

  /** A control request: `status` is answered by every kind; other types go to the kind's leader code. */
  private onControl(job: Participation, req: ControlRequest): unknown {
    if (req.type === 'status') {
      return { job: job.spec.id, kind: job.kind.name, leader: this.id, members: [...job.members.view().keys()].sort(), counters: job.role.counters?.() ?? ZERO_COUNTERS };
    }
    const handler = job.leaderRole?.onControl;
    if (!handler) throw new Error(`job ${job.spec.id} (kind ${job.kind.name}) does not take control requests of type "${req.type}"`);
    return serveControl(req, () => handler(req.type, req.body));
  }

  private stopLeading(job: Participation): void {
    void job.control?.stop();
    job.control = undefined;
    job.leaderRole?.stop();
    job.leaderRole = undefined;
  }

  /** Undoes a join cut short: the job's roles, watches, candidacy and membership here go; nothing is recorded. */
  private async undoJoin(job: Participation): Promise<void> {
    this.stopTakingPart(job);
    await job.election.resign().catch(() => undefined);
    await job.members.leave().catch(() => undefined);
    if (this.job === job) this.job = undefined;
  }

  /** Stops the job's roles, watches and variables here; its membership and candidacy stay (the caller ends them in its order). */
  private stopTakingPart(job: Participation): void {
    job.role.stop();
    this.stopLeading(job);
    job.resultWatch?.close();
    job.vars.stop();
    job.members.stop();
  }

  /** Leaves a job: drained (tasks handed over first) or finished (nothing left to hand over). */
  private leave(job: Participation, reason: 'drained' | 'finished' | 'failed', opts: { handOver?: boolean } = {}): Promise<void> {
    if (job.leaving) return job.leaving;
    job.leaving = (async () => {
      if (reason === 'drained') await job.role.drain(opts);
      clearInterval(job.progress);
      this.reportProgress(job);
      void this.stats.publish(); // the job's final counters, while they are still the job's
      this.observed.jobLeft(this.currentStats(), reason);
      this.stopTakingPart(job);
      // Before leaving the member list: whoever waits for the members to go then finds every tally.
      if (!this.closed) await recordTally(this.client, job.paths, this.id, job.role.counters?.() ?? ZERO_COUNTERS);
      await job.members.leave().catch(() => undefined);
      // Only then out of the election: the next leader's view of the members no longer has this node
      // (a malleable job's new leader restored its objects onto a node about to go, and rolled back again).
      await job.election.resign().catch(() => undefined);
      if (this.job === job) this.job = undefined;
      if (!this.closed) {
        await this.cluster.update({ address: this.transport.address, workers: this.workers.size, job: null }).catch(() => undefined);
        if (reason !== 'drained') await this.clearAssignment(job.spec.id);
      }
      this.emit({ type: 'job-left', node: this.id, job: job.spec.id, reason });
      void this.stats.publish();
    })();
    return job.leaving;
  }

  /** A finished job releases its nodes: clear the assignment if it still names that job. */
  private async clearAssignment(jobId: string): Promise<void> {
    const path = joinPath(this.paths.assignments, this.id);
    try {
      const { data, stat } = await this.client.getData(path);
      if (data.toString('utf8') === jobId) await this.client.setData(path, Buffer.alloc(0), stat.version);
    } catch (err) {
      if (!isCoordError(err, 'BAD_VERSION', 'NO_NODE')) this.log.warn('node', 'could not clear the assignment', err);
    }
  }

  // ---- messages ----------------------------------------------------------------------

  private onWorkerEvent(ev: WorkerEvent): void {
    const job = this.job;
    // A late report of a task of a job this node has left (e.g. the cancelled root of the job before) is
    // not the current job's, even where the ids are alike.
    if (ev.job !== undefined && ev.job !== job?.spec.id) return this.log.debug('node', `dropped a worker report (${ev.type}${'taskId' in ev ? ` of task ${ev.taskId}` : ''}) of job ${ev.job}, which this node no longer runs`);
    job?.role.onWorker?.(ev);
  }

  /** A frame from a peer: a blob frame goes to the data plane; a job envelope is checked, then routed to the job's kind (or bounced). */
  private onMessage(from: string, m: unknown): void {
    // The routing rule: a "blob.*" frame is the data plane's (it validates it); anything else must be a job envelope.
    if (isBlobMessage(m)) return this.dataPlane?.deliver(from, m);
    const wrong = validateEnvelope(m);
    if (wrong) return this.log.warn('node', `dropped a malformed message from ${from}: ${wrong}`);
    const envelope = m as JobEnvelope;
    if (envelope.type === 'keep') {
      const bad = validateKeep(envelope.body);
      if (bad) return this.log.warn('node', `dropped a malformed keep message from ${from}: ${bad}`);
      return onKeep(this.dataPlane, envelope.job, from, envelope.body as KeepBody);
    }
    const job = this.job;
    // A draining member still takes messages (acknowledgements of its hand-overs); its kind refuses new work.
    if (!job || envelope.job !== job.spec.id) {
      // Not (or no longer) in that job: bounce it so the sender does not wait (never bounce a bounce).
      if (envelope.type === 'job') void this.send(from, { type: 'job-bounce', job: envelope.job, body: envelope.body }).catch(() => undefined);
      return;
    }
    const bad = job.kind.validateMessage?.(envelope.body);
    if (bad) return job.log.warn('node', `dropped a malformed ${job.kind.name} message from ${from}: ${bad}`);
    if (envelope.type === 'job') job.role.onMessage?.(from, envelope.body);
    else job.role.onBounce?.(from, envelope.body);
  }

  /** The job's kind failed the job here: say so and, while this node is still in the job, end it (unless it already ended otherwise). */
  private failJob(paths: JobPaths, error: string): void {
    this.emit({ type: 'failed', job: paths.id, node: this.id, error });
    if (this.job?.paths !== paths) return;
    publishOutcome(this.client, paths, { status: 'failed', error, finishedAt: Date.now() })
      .catch((err: unknown) => this.job?.log.error('node', 'could not publish the job failure', err));
  }

  private async send(to: string, message: JobEnvelope): Promise<void> {
    const member = this.cluster.view().get(to);
    if (!member?.meta.address) throw new Error(`node ${to} is not in the cluster`);
    await this.transport.send({ nodeId: to, address: member.meta.address }, message as never);
    // One record per message sent, at trace level: what a node tells its peers, in order (a test of
    // faults acts on it while the message is on its way).
    if (this.log.enabled('trace')) this.log.child({ job: message.job }).trace('node', `sent ${message.body.type} to ${to}`);
  }

  private reportProgress(job: Participation): void {
    const load = job.role.load?.() ?? { running: 0, pooled: 0 };
    const st = job.role.counters?.() ?? ZERO_COUNTERS;
    this.emit({
      type: 'progress', job: job.spec.id, node: this.id, running: load.running, pooled: load.pooled,
      tasksDone: st.tasksDone, splits: st.splits, stealsIn: st.stealsIn, stealsOut: st.stealsOut, migrationsOut: st.migrationsOut,
    });
  }

  /** What the node publishes for monitors (see node-stats.ts). */
  private currentStats() {
    return statsOfJob(this.job, this.workers.size);
  }

  private emit(event: NodeEvent): void {
    this.events.emit('event', event);
  }
}
