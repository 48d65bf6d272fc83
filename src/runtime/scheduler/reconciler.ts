import { isCoordError, isRetryable } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient, Op } from '../../coord/types.js';
import { watchChildren, watchData, type WatchEndReason, type WatchHandle } from '../../coord/watch.js';
import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import { decode } from '../../util/codec.js';
import { jobPaths } from '../job/job-paths.js';
import type { JobSpec } from '../job/job-spec.js';
import type { ClusterView, Decision, JobState, NodeState } from './cluster-view.js';
import { fcfsPolicy } from './fcfs-policy.js';
import { KnownCluster, type KnownAssignment, type KnownJob } from './known-cluster.js';
import { plan } from './planner.js';
import type { SchedulingPolicy } from './policy.js';
import { nodeRangeOf, parseSize, schedulerPaths, type SchedulerPaths } from './scheduler-paths.js';
import { childrenOrNone, readOrNull } from '../../coord/znode-reads.js';

export interface ReconcilerOptions {
  root?: string;
  /** Default: strict FCFS. */
  policy?: SchedulingPolicy;
  /** Read and plan ('planned' events) but never write: for watchers of the plan, such as a Provisioner. */
  observeOnly?: boolean;
}

export interface ReconcilerStats {
  passes: number;
  /** Plans committed (each one multi). */
  commits: number;
  /** Commits that lost a race and were re-planned. */
  conflicts: number;
  /** Assignment znodes of dead nodes deleted. */
  staleRemoved: number;
}

type Events = {
  /** Every pass: what it saw and what it decided (before committing). */
  planned: { view: ClusterView; decisions: readonly Decision[] };
  /** A plan was committed. */
  committed: readonly Decision[];
  /** The stale assignment of a dead node was deleted. */
  removed: string;
  /** The session ended: this reconciler does nothing more. */
  ended: WatchEndReason;
};

/** What a pass read about one job (`znodes`: the scheduler znodes it was built from). */
type JobRead = { kind: 'pending' } | { kind: 'job'; state: JobState; startedMarker: boolean; znodes: KnownJob };

/** What a pass plans from: the members, every assignment znode (null: unreadable now) and each job. */
interface PassInput {
  members: readonly string[];
  assignments: Array<{ id: string; read: KnownAssignment | null }>;
  jobs: Map<string, JobRead>;
}

/**
 * Keeps node assignments in line with the scheduling policy: reads the cluster (membership,
 * assignments, jobs) from the coordination service, plans (planner.ts) and commits the plan.
 *
 * - Watches are only triggers: every change (a node joins or dies, an assignment is written, a job
 *   is created, resized or finishes) schedules a pass; passes run one at a time and a change during
 *   a pass schedules exactly one more.
 * - A pass reads the epoch first. If it is where this reconciler left it — at its last full read or
 *   its own last commit, so no other reconciler has committed since — the pass plans from what it
 *   knows (known-cluster.ts): that read, its own commits and what the watches delivered since; the
 *   changes on their way are each a watch that schedules another pass. Otherwise (another commit, a
 *   lost race, a reconnection, a node or job not fully known yet) it reads afresh after the epoch:
 *   a session's reads are ordered, so every other reconciler's commit up to that epoch version is
 *   visible to the reads after it. In a steady cluster a pass costs one read instead of a read per
 *   node and three per job.
 * - The plan commits as one multi that bumps the epoch and sets each assignment at the version it planned from.
 *   If anything moved meanwhile — another reconciler committed (two may run briefly around a
 *   failover), a node cleared its own assignment — the multi fails as a whole and the pass is re-run
 *   on fresh reads. So a node is never assigned twice and a job never gets two plans' nodes.
 * - A job that gets its first nodes gets its `started` marker in the same multi.
 * - The assignment znode of a node that is no longer a member is deleted, in a multi that first
 *   creates and deletes the node's membership znode: it fails if the node is (again) a member, so an
 *   assignment is deleted only while its node is absent — a node joins membership before it creates its
 *   assignment, and a node that rejoins under the same id keeps it.
 */
export class Reconciler {
  readonly stats: ReconcilerStats = { passes: 0, commits: 0, conflicts: 0, staleRemoved: 0 };
  private readonly events = new Emitter<Events>();
  private readonly paths: SchedulerPaths;
  private readonly policy: SchedulingPolicy;
  private readonly observeOnly: boolean;
  private readonly watches: WatchHandle[] = [];
  private readonly assignmentWatches = new Map<string, WatchHandle>();
  private readonly jobWatches = new Map<string, WatchHandle[]>();
  /** Specs are immutable and results final: both are read once. */
  private readonly specs = new Map<string, JobSpec | 'bad'>();
  private readonly finished = new Set<string>();
  private readonly known = new KnownCluster();
  /** The epoch version up to which `known` is complete and current (undefined: read afresh). */
  private knownEpoch: number | undefined;
  private dirty = false;
  private running: Promise<void> | undefined;
  private stopped = false;
  private offState: (() => void) | undefined;

  constructor(private readonly client: CoordClient, opts: ReconcilerOptions = {}) {
    this.paths = schedulerPaths(opts.root);
    this.policy = opts.policy ?? fcfsPolicy();
    this.observeOnly = opts.observeOnly === true;
  }

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Starts watching; resolves after the first pass. */
  async start(): Promise<void> {
    const p = this.paths;
    await Promise.all([mkdirp(this.client, p.nodes), mkdirp(this.client, p.assignments), mkdirp(this.client, p.jobs)]);
    try {
      await this.client.create(p.epoch);
    } catch (err) {
      if (!isCoordError(err, 'NODE_EXISTS')) throw err;
    }
    const onEnd = (reason: WatchEndReason) => this.end(reason);
    this.offState = this.client.onState((s) => {
      if (s !== 'connected') return;
      this.knownEpoch = undefined; // changes may have gone by unwatched
      this.trigger();
    });
    this.watches.push(
      watchChildren(this.client, p.nodes, (names) => {
        this.known.members = names ?? [];
        this.trigger();
      }, { onEnd }),
      watchChildren(this.client, p.assignments, (names) => this.syncAssignmentWatches(names ?? []), { onEnd }),
      watchChildren(this.client, p.jobs, (names) => this.syncJobWatches(names ?? []), { onEnd }),
    );
    await Promise.all(this.watches.map((w) => w.ready));
    this.trigger();
    await this.idle();
  }

  /** Resolves when no pass is running or scheduled (for tests and orderly shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.offState?.();
    for (const w of [...this.watches, ...this.assignmentWatches.values(), ...[...this.jobWatches.values()].flat()]) w.close();
    this.watches.length = 0;
    this.assignmentWatches.clear();
    this.jobWatches.clear();
  }

  private end(reason: WatchEndReason): void {
    if (this.stopped) return;
    this.stop();
    this.events.emit('ended', reason);
  }

  /** Schedules a pass; passes never overlap, and changes during one cause exactly one more. */
  private trigger(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running) return;
    const run = (async () => {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        try {
          await this.pass();
        } catch (err) {
          if (isCoordError(err, 'SESSION_EXPIRED')) this.end('expired');
          else if (isCoordError(err, 'CLOSED')) this.end('closed');
          // After a connection loss the watches re-read on reconnect and trigger the next pass.
          else if (!isRetryable(err)) log.error('scheduler', 'scheduling pass failed', err);
        }
      }
    })();
    this.running = run;
    void run.then(() => {
      if (this.running === run) this.running = undefined;
      if (this.dirty) this.trigger(); // a change arrived between the loop's last check and now
    });
  }

  private syncAssignmentWatches(names: string[]): void {
    const present = new Set(names);
    this.known.assignmentIds = names;
    for (const [id, w] of this.assignmentWatches) {
      if (!present.has(id)) {
        w.close();
        this.assignmentWatches.delete(id);
        this.known.forgetAssignment(id);
      }
    }
    for (const id of present) {
      if (this.assignmentWatches.has(id)) continue;
      this.assignmentWatches.set(id, watchData(this.client, joinPath(this.paths.assignments, id), (data) => {
        if (data === null) this.known.forgetAssignment(id);
        // An echo of this reconciler's own commit is no news: no pass for it.
        else if (!this.known.learnAssignment(id, { job: data.data.toString('utf8'), version: data.stat.version, mtime: data.stat.mtime, zxid: data.stat.mzxid })) return;
        this.trigger();
      }));
    }
    this.trigger();
  }

  /** Each unfinished job: its spec (appears just after the job's folder), size and result. */
  private syncJobWatches(ids: string[]): void {
    const present = new Set(ids);
    this.known.jobIds = ids;
    for (const id of [...this.jobWatches.keys()]) if (!present.has(id)) this.closeJob(id);
    for (const id of [...this.specs.keys()]) if (!present.has(id)) this.specs.delete(id);
    for (const id of [...this.finished]) if (!present.has(id)) this.finished.delete(id);
    for (const id of [...this.known.jobs.keys()]) if (!present.has(id)) this.known.forgetJob(id);
    for (const id of present) {
      if (this.jobWatches.has(id) || this.finished.has(id)) continue;
      const p = jobPaths(id, this.paths.root);
      this.jobWatches.set(id, [
        watchData(this.client, p.spec, () => this.trigger()),
        watchData(this.client, this.paths.size(id), (data) => {
          if (this.known.learnSize(id, data ? { value: parseSize(data.data), version: data.stat.version } : { value: null, version: -1 })) this.trigger();
        }),
        watchData(this.client, p.result, (data) => {
          if (this.known.learnResult(id, data !== null)) this.trigger();
        }),
      ]);
    }
    this.trigger();
  }

  private closeJob(id: string): void {
    for (const w of this.jobWatches.get(id) ?? []) w.close();
    this.jobWatches.delete(id);
  }

  private async pass(): Promise<void> {
    this.stats.passes++;
    const p = this.paths;
    const epoch = (await this.client.getData(p.epoch)).stat.version;
    let input: PassInput;
    if (epoch === this.knownEpoch && this.known.complete()) {
      input = await this.knownInput();
    } else {
      input = await this.readAll();
      // Trusted from now on only if the watches have caught up with this read (else: read afresh next time too).
      this.knownEpoch = this.knownAgrees(input) ? epoch : undefined;
    }
    const { members, assignments, jobs } = input;
    // Whether what is known was current at this epoch (a commit then keeps it current; else it still lags).
    const trusted = this.knownEpoch === epoch;
    const live = new Set(members);
    const nodes: NodeState[] = [];
    const versions = new Map<string, number>();
    const dead: Array<{ id: string; version: number }> = [];
    for (const { id, read } of assignments) {
      if (!read) continue;
      const job = read.job;
      if (!live.has(id)) dead.push({ id, version: read.version });
      else if (jobs.get(job)?.kind !== 'pending') {
        // A node of a job whose spec is not readable yet is left alone: it is neither idle nor surplus.
        nodes.push({ id, assignment: job, assignedAt: read.mtime });
        versions.set(id, read.version);
      }
    }
    const known = [...jobs.values()].flatMap((j) => (j.kind === 'job' ? [j] : []));
    const view: ClusterView = { now: Date.now(), nodes, jobs: known.map((j) => j.state) };
    if (!this.observeOnly) await Promise.all(dead.map((d) => this.removeStale(d.id, d.version)));
    const decisions = plan(view, this.policy);
    this.events.emit('planned', { view, decisions });
    if (decisions.length === 0 || this.observeOnly) return;

    const ops: Op[] = [{ op: 'setData', path: p.epoch, data: Buffer.alloc(0), version: epoch }];
    for (const d of decisions) ops.push({ op: 'setData', path: joinPath(p.assignments, d.node), data: Buffer.from(d.to), version: versions.get(d.node)! });
    const starting = new Set(decisions.filter((d) => d.to !== '').map((d) => d.to));
    const markers = known.filter((j) => starting.has(j.state.id) && !j.startedMarker).map((j) => j.state.id);
    for (const id of markers) ops.push({ op: 'create', path: p.started(id) });
    let results: Awaited<ReturnType<CoordClient['multi']>>;
    try {
      results = await this.client.multi(ops);
    } catch (err) {
      this.knownEpoch = undefined;
      if (!isCoordError(err, 'BAD_VERSION', 'NO_NODE', 'NODE_EXISTS')) throw err;
      this.stats.conflicts++;
      log.debug('scheduler', `plan lost a race (${err.message}); planning again`);
      this.dirty = true; // the next pass reads afresh after the conflicting write: it sees it
      return;
    }
    // What this commit wrote is known without reading it back (nobody committed between the epoch read and it)
    decisions.forEach((d, i) => {
      const r = results[i + 1];
      if (r?.op === 'setData') this.known.learnAssignment(d.node, { job: d.to, version: r.stat.version, mtime: r.stat.mtime, zxid: r.stat.mzxid });
    });
    for (const id of markers) this.known.learnStarted(id, true);
    this.knownEpoch = trusted && results[0]?.op === 'setData' ? results[0].stat.version : undefined;
    // Nodes released now are idle only in the next plan (waiting jobs get them there): one more pass, from what is known.
    this.dirty = true;
    this.stats.commits++;
    for (const d of decisions) log.info('scheduler', d.to === '' ? `released ${d.node} from ${d.from}` : `assigned ${d.node} to ${d.to}`);
    this.events.emit('committed', decisions);
  }

  /** The pass's input from what this reconciler knows (no reads but the specs it has not read yet). */
  private async knownInput(): Promise<PassInput> {
    const k = this.known;
    const jobs = new Map<string, JobRead>();
    for (const id of k.jobIds!) {
      const spec = await this.specOf(id);
      jobs.set(id, spec === undefined ? { kind: 'pending' } : this.jobRead(id, spec, k.jobs.get(id)!));
    }
    return { members: k.members!, assignments: k.assignmentIds!.map((id) => ({ id, read: k.assignments.get(id) ?? null })), jobs };
  }

  /**
   * The pass's input read afresh (after the epoch). It does not feed what is known (a read and a watch
   * delivery of the same znode may be processed in either order): only the started markers, which never go away.
   */
  private async readAll(): Promise<PassInput> {
    const p = this.paths;
    const [members, assignmentIds, jobIds] = await Promise.all([childrenOrNone(this.client, p.nodes), childrenOrNone(this.client, p.assignments), childrenOrNone(this.client, p.jobs)]);
    const [assignments, jobReads] = await Promise.all([
      Promise.all(assignmentIds.map(async (id) => {
        const data = await readOrNull(this.client, joinPath(p.assignments, id));
        return { id, read: data ? { job: data.data.toString('utf8'), version: data.stat.version, mtime: data.stat.mtime, zxid: data.stat.mzxid } : null };
      })),
      Promise.all(jobIds.map(async (id) => [id, await this.readJob(id)] as const)),
    ]);
    return { members, assignments, jobs: new Map(jobReads) };
  }

  /** Whether what this reconciler knows is what a fresh read just found. */
  private knownAgrees(input: PassInput): boolean {
    const k = this.known;
    if (!k.complete()) return false;
    const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set([...a, ...b]).size === a.length;
    if (!same(k.members!, input.members) || !same(k.assignmentIds!, input.assignments.map((a) => a.id)) || !same(k.jobIds!, [...input.jobs.keys()])) return false;
    for (const { id, read } of input.assignments) {
      const a = k.assignments.get(id);
      if (!read || !a || a.job !== read.job || a.version !== read.version) return false;
    }
    for (const [id, j] of input.jobs) {
      const z = k.jobs.get(id);
      if (j.kind === 'pending' || !z || z.finished !== j.znodes.finished) return false;
      if (z.finished) continue;
      if (z.started !== j.znodes.started || z.size?.version !== j.znodes.size?.version || z.size?.value !== j.znodes.size?.value) return false;
    }
    return true;
  }

  private async readJob(id: string): Promise<JobRead> {
    const spec = await this.specOf(id);
    if (spec === undefined) return { kind: 'pending' };
    if (this.finished.has(id)) return this.jobRead(id, spec, { size: undefined, finished: true, started: true });
    const p = jobPaths(id, this.paths.root);
    const [result, size, started] = await Promise.all([
      this.client.exists(p.result),
      readOrNull(this.client, this.paths.size(id)),
      this.client.exists(this.paths.started(id)),
    ]);
    this.known.learnStarted(id, started !== null);
    return this.jobRead(id, spec, { size: { value: size ? parseSize(size.data) : null, version: size?.stat.version ?? -1 }, finished: result !== null, started: started !== null });
  }

  /** A job's state from its spec and its scheduler znodes. */
  private jobRead(id: string, spec: JobSpec, z: KnownJob): JobRead {
    const range = nodeRangeOf(spec);
    const base = { id, createdAt: spec.createdAt, ...range, ...(spec.managedBy !== undefined ? { external: true } : {}) };
    if (this.finished.has(id)) return { kind: 'job', state: { ...base, desired: 0, finished: true, started: true }, startedMarker: true, znodes: { size: undefined, finished: true, started: true } };
    if (z.finished) {
      this.finished.add(id);
      this.closeJob(id);
    }
    const desired = z.size?.value ?? spec.nodes.requested;
    return { kind: 'job', state: { ...base, desired, finished: z.finished === true, started: z.started === true }, startedMarker: z.started === true, znodes: z };
  }

  /** The job's spec (read once: specs are immutable), or undefined while it is not readable. */
  private async specOf(id: string): Promise<JobSpec | undefined> {
    const p = jobPaths(id, this.paths.root);
    let spec = this.specs.get(id);
    if (spec === undefined) {
      const read = await readOrNull(this.client, p.spec);
      if (!read) return undefined; // the folder is created just before the spec
      try {
        spec = decode<JobSpec>(read.data);
        if (typeof spec?.createdAt !== 'number') throw new Error('no createdAt');
      } catch (err) {
        log.warn('scheduler', `job ${id} has an unreadable spec; leaving it alone`, err);
        spec = 'bad';
      }
      this.specs.set(id, spec);
    }
    return spec === 'bad' ? undefined : spec;
  }

  private async removeStale(nodeId: string, version: number): Promise<void> {
    const member = joinPath(this.paths.nodes, nodeId);
    try {
      await this.client.multi([
        { op: 'create', path: member },
        { op: 'delete', path: member },
        { op: 'delete', path: joinPath(this.paths.assignments, nodeId), version },
      ]);
    } catch (err) {
      if (isCoordError(err, 'NODE_EXISTS', 'BAD_VERSION', 'NO_NODE')) return; // it is a member again, or the assignment moved
      throw err;
    }
    this.known.forgetAssignment(nodeId);
    this.stats.staleRemoved++;
    log.info('scheduler', `removed the assignment of departed node ${nodeId}`);
    this.events.emit('removed', nodeId);
  }
}
