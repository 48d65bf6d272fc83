import { isCoordError, isRetryable } from '../../../coord/errors.js';
import { joinPath } from '../../../coord/paths.js';
import { LeaderElection } from '../../../coord/recipes/leader-election.js';
import { mkdirp } from '../../../coord/tree-ops.js';
import type { CoordClient } from '../../../coord/types.js';
import { watchChildren, watchData, type WatchHandle } from '../../../coord/watch.js';
import { EventPublisher } from '../../../runtime/node/event-source.js';
import { requestJob } from '../../../runtime/client/job-requests.js';
import { childrenOrNone, readOrNull } from '../../../coord/znode-reads.js';
import { Emitter } from '../../../util/emitter.js';
import { log } from '../../../util/log.js';
import type { JobDecision } from './job-decisions.js';
import { ManagerCore } from './manager-core.js';
import { listManagedJobs, managerPaths, updateRecord, type ManagedJobInfo, type RescaleEvent } from './manager-store.js';
import { moveNodes } from '../../../runtime/scheduler/index.js';
import { managerPolicy, type PolicyName } from './policies.js';
import type { ExecutorEvent } from './split-phase-executor.js';

export interface ResourceManagerOptions {
  /** Candidate id in the managers' election (one manager acts, others stand by). */
  id: string;
  root?: string;
  policy: PolicyName;
  /** Equipartition's T_gap, ms: the least time between two rescales of a job (it grows with the job's measured T_rescale). */
  tGapMs?: number;
  /** k: a rescale is proposed only when its expected gain over the next T_gap exceeds k × T_rescale (default 2). */
  costFactor?: number;
  /** The largest share of a job's time spent rescaling: T_gap grows to T_rescale / this (default 0.1). */
  maxOverhead?: number;
  /** Start queued jobs whose minimum fits now behind one that does not (default false; see equipartitionPolicy). */
  backfill?: boolean;
  /** How long a job may take to acknowledge a rescale before it counts as refused, ms (default 10 min). */
  rescaleTimeoutMs?: number;
}

type Events = { event: ExecutorEvent & { tRescaleMs?: number }; elected: void; pass: void };

/** A shrink's outcome; `measured`: the job acknowledged it (a refused or timed-out one says nothing of its cost). */
interface Ack { job: string; nodes: string[]; tRescaleMs: number; measured: boolean }

/**
 * The resource manager as a service over the pool of node processes (seed §IV): one elected
 * instance runs Algorithm 1 on ManagerCore. Its state is in the coordination service — the core's
 * job specs and results, node assignments (the actual node → job map) and each job's managed record
 * (kind, pending shrink, events) — so a restarted manager rebuilds the maps from the assignments
 * and sends any unacknowledged shrink again; it loses no job.
 *
 * Rescale mechanisms: a job with a kind gets `rescale {nodes: [...]}` control requests (or `vacate
 * {node}` for a warned node) and its nodes are released after it acknowledges; a task-pool job is
 * shrunk by releasing its nodes (they drain) and the shrink is done when they have left the job.
 * A node with a failure warning (`warnNode`) is vacated and given to no job until the warning is cleared.
 */
export class ResourceManager {
  private readonly events = new Emitter<Events>();
  private readonly paths: ReturnType<typeof managerPaths>;
  private readonly election: LeaderElection;
  private readonly watches: WatchHandle[] = [];
  private readonly drainWatches = new Map<string, WatchHandle>();
  private readonly jobWatches = new Map<string, WatchHandle[]>();
  private readonly acks: Ack[] = [];
  private readonly seenFinished = new Set<string>();
  private core: ManagerCore | undefined;
  private jobs: ManagedJobInfo[] = [];
  private gapTimer: NodeJS.Timeout | undefined;
  private dirty = false;
  private running: Promise<void> | undefined;
  private active = false;
  private stopped = false;
  /** Every job's launches and rescales, for the dashboard (an event source). */
  private readonly source: EventPublisher;

  constructor(private readonly client: CoordClient, private readonly opts: ResourceManagerOptions) {
    this.paths = managerPaths(opts.root);
    this.election = new LeaderElection(client, this.paths.election, { id: opts.id, data: null });
    this.source = new EventPublisher(client, `manager.${opts.id.replace(/[^\w.-]/g, '_')}`.slice(0, 64), { root: opts.root });
  }

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  get isActive(): boolean {
    return this.active;
  }

  async start(): Promise<void> {
    await Promise.all([mkdirp(this.client, this.paths.nodes), mkdirp(this.client, this.paths.jobs), mkdirp(this.client, warningsPath(this.opts.root))]);
    this.election.on('elected', () => void this.activate());
    this.election.on('lost', () => this.deactivate());
    await this.election.start();
    this.source.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.deactivate();
    await this.idle();
    await this.election.resign().catch(() => undefined);
    await this.source.stop().catch(() => undefined);
  }

  /** Resolves when no pass is running or scheduled. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private activate(): void {
    if (this.stopped || this.active) return;
    this.active = true;
    this.events.emit('elected', undefined);
    const onEnd = () => this.deactivate();
    this.watches.push(
      watchChildren(this.client, this.paths.nodes, () => this.trigger(), { onEnd }),
      watchChildren(this.client, warningsPath(this.opts.root), () => this.trigger(), { onEnd }),
      watchChildren(this.client, this.paths.jobs, (ids) => this.syncJobWatches(ids ?? []), { onEnd }),
    );
  }

  private deactivate(): void {
    this.active = false;
    this.core = undefined;
    clearTimeout(this.gapTimer);
    for (const w of [...this.watches, ...this.drainWatches.values(), ...[...this.jobWatches.values()].flat()]) w.close();
    this.watches.length = 0;
    this.drainWatches.clear();
    this.jobWatches.clear();
  }

  private syncJobWatches(ids: string[]): void {
    const present = new Set(ids);
    for (const [id, ws] of this.jobWatches) if (!present.has(id)) { for (const w of ws) w.close(); this.jobWatches.delete(id); }
    for (const id of present) {
      if (this.jobWatches.has(id) || this.seenFinished.has(id)) continue;
      this.jobWatches.set(id, [this.paths.record(id), joinPath(this.paths.jobs, id, 'spec'), joinPath(this.paths.jobs, id, 'result')].map((p) => watchData(this.client, p, () => this.trigger())));
    }
    this.trigger();
  }

  private trigger(): void {
    if (!this.active) return;
    this.dirty = true;
    if (this.running) return;
    const run = (async () => {
      while (this.dirty && this.active) {
        this.dirty = false;
        try {
          await this.pass();
          this.events.emit('pass', undefined);
        } catch (err) {
          if (isCoordError(err, 'SESSION_EXPIRED', 'CLOSED')) this.deactivate();
          else if (!isRetryable(err)) log.error('manager', 'scheduling pass failed', err);
        }
      }
    })();
    this.running = run;
    void run.then(() => {
      if (this.running === run) this.running = undefined;
      if (this.dirty) this.trigger();
    });
  }

  private async pass(): Promise<void> {
    const [members, warned] = await Promise.all([childrenOrNone(this.client, this.paths.nodes), childrenOrNone(this.client, warningsPath(this.opts.root))]);
    this.jobs = await listManagedJobs(this.client, this.opts.root);
    const core = this.core ?? (this.core = await this.restore());
    const live = members.filter((n) => !warned.includes(n)).sort();
    for (const job of this.jobs.filter((j) => j.finished && !this.seenFinished.has(j.id))) {
      this.seenFinished.add(job.id);
      for (const w of this.jobWatches.get(job.id) ?? []) w.close();
      this.jobWatches.delete(job.id);
      if (job.record.pending) await updateRecord(this.client, job.id, (r) => void delete r.pending, this.opts.root).catch(() => undefined);
      await this.perform(core.jobFinished(job.id));
    }
    for (const node of new Set([...core.executor.actualMap().keys(), ...core.executor.schedMap().keys()])) {
      if (!members.includes(node)) await this.perform(core.nodeLost(node));
    }
    for (const ack of this.acks.splice(0)) await this.acknowledged(core, ack);
    await this.vacateWarned(core, warned);
    await this.evolvingRequests(core, live);
    await this.operatorRescales(core, live);
    await this.perform(core.schedule(this.jobs, live));
    this.armGapTimer(core);
  }

  /** A new manager's maps: what the assignments say, and the shrinks its predecessor left pending. */
  private async restore(): Promise<ManagerCore> {
    const managed = new Set(this.jobs.filter((j) => !j.finished).map((j) => j.id));
    const ids = await childrenOrNone(this.client, this.paths.assignments);
    const holding: Array<[string, string]> = [];
    for (const id of ids) {
      const job = (await readOrNull(this.client, joinPath(this.paths.assignments, id)))?.data.toString('utf8') ?? '';
      if (managed.has(job)) holding.push([id, job]);
    }
    const core = new ManagerCore(managerPolicy(this.opts.policy, this.policyOptions()), Date.now, holding);
    for (const job of this.jobs.filter((j) => managed.has(j.id))) {
      for (const e of job.record.events) if (e.tRescaleMs !== undefined && e.type !== 'launch') core.rescaleMeasured(job.id, e.tRescaleMs);
      const last = job.record.events.at(-1);
      if (last) core.executor.restoreChange(job.id, last.at);
      const pending = job.record.pending;
      if (pending) await this.perform(core.executor.execute([{ type: 'shrink', job: job.id, nodes: pending.nodes, removed: pending.removed }]));
    }
    log.info('manager', `active: ${holding.length} node(s) held by managed jobs, ${this.jobs.filter((j) => !j.finished).length} job(s) queued or running`);
    return core;
  }

  private policyOptions() {
    const { tGapMs, costFactor, maxOverhead, backfill } = this.opts;
    return { ...(tGapMs !== undefined ? { tGapMs } : {}), ...(costFactor !== undefined ? { costFactor } : {}), ...(maxOverhead !== undefined ? { maxOverhead } : {}), ...(backfill !== undefined ? { backfill } : {}) };
  }

  private async acknowledged(core: ManagerCore, ack: Ack): Promise<void> {
    const job = this.jobs.find((j) => j.id === ack.job);
    const pending = core.executor.inFlight().get(ack.job);
    if (!pending) return;
    if (ack.measured) core.rescaleMeasured(ack.job, ack.tRescaleMs);
    const actions = core.shrinkAcknowledged(ack.job, ack.nodes);
    if (job?.record.channel === 'control') {
      const released = pending.decision.removed.filter((n) => !ack.nodes.includes(n));
      await moveNodes(this.client, released.map((node) => ({ node, from: ack.job, to: '' })), this.opts.root);
    }
    await this.record(ack.job, { at: Date.now(), type: 'shrink', nodes: ack.nodes.length, tRescaleMs: ack.tRescaleMs }, true);
    this.emit({ at: Date.now(), type: 'shrink-acked', job: ack.job, nodes: ack.nodes, tRescaleMs: ack.tRescaleMs });
    await this.perform(actions);
  }

  /** A warned node held by a malleable job is shrunk away from (proactive fault tolerance). */
  private async vacateWarned(core: ManagerCore, warned: string[]): Promise<void> {
    await this.perform(core.vacate(warned, this.jobs), new Set(warned));
  }

  /**
   * `tidepool scale JOB N`: an operator's size for a running job. It is carried out now (T_gap and
   * cost or not, as many nodes as are free for an expand) and then sticks: the record's `pin` makes
   * the job's range [N, N] for the policy until the operator releases it (releasePin).
   */
  private async operatorRescales(core: ManagerCore, live: string[]): Promise<void> {
    for (const job of this.jobs.filter((j) => j.record.rescaleTo !== undefined && !j.finished)) {
      if (core.executor.isBusy(job.id)) continue;
      const want = Math.min(Math.max(job.record.rescaleTo!, job.range.min), job.range.max);
      const record = await updateRecord(this.client, job.id, (r) => {
        r.pin = r.rescaleTo!;
        delete r.rescaleTo;
      }, this.opts.root);
      log.info('manager', `job ${job.id}: the operator fixed its size at ${record.pin} node(s) until released`);
      job.pinned = true;
      job.minNodes = job.maxNodes = job.nodes = want;
      await this.resize(core, job.id, want, live);
    }
  }

  /**
   * An evolving job's `requestResize(min, max)`: the job's range becomes [min, max] for every later
   * decision of the policy (its record's `bounds`), and, as for an operator's request, a job outside
   * it is shrunk or expanded to the nearest bound now, T_gap or not. Only a malleable job is resized
   * while it runs; another's request is dropped with a warning.
   */
  private async evolvingRequests(core: ManagerCore, live: string[]): Promise<void> {
    for (const job of this.jobs.filter((j) => j.record.resize !== undefined && !j.finished)) {
      if (core.executor.isBusy(job.id)) continue;
      const { min, max } = job.record.resize!;
      const malleable = job.flexibility === 'malleable';
      if (!malleable) log.warn('manager', `job ${job.id} (${job.flexibility}) asked for ${min}–${max} nodes; only a malleable job is resized while it runs`);
      await updateRecord(this.client, job.id, (r) => {
        delete r.resize;
        if (malleable) r.bounds = { min, max };
      }, this.opts.root);
      if (!malleable || job.pinned) continue; // a pinned job keeps the operator's size (clamped to the new range from the next pass)
      job.minNodes = min;
      job.maxNodes = max;
      const held = [...core.executor.schedMap().values()].filter((j) => j === job.id).length;
      await this.resize(core, job.id, Math.min(Math.max(held, min), max), live);
    }
  }

  /** Shrinks or expands a running job to `want` nodes now (as many as are free, for an expand). */
  private async resize(core: ManagerCore, jobId: string, want: number, live: string[]): Promise<void> {
    const sched = core.executor.schedMap();
    const mine = [...sched].filter(([, j]) => j === jobId).map(([n]) => n).sort();
    let decision: JobDecision | undefined;
    if (mine.length > 0 && want < mine.length) decision = { type: 'shrink', job: jobId, nodes: mine.slice(0, want), removed: mine.slice(want) };
    if (mine.length > 0 && want > mine.length) {
      const added = live.filter((n) => !sched.has(n)).slice(0, want - mine.length);
      if (added.length > 0) decision = { type: 'expand', job: jobId, nodes: [...mine, ...added].sort(), added };
    }
    if (decision) await this.perform(core.executor.execute([decision]));
  }

  /** Carries out what the executor says to do now. */
  private async perform(actions: readonly JobDecision[], vacating = new Set<string>()): Promise<void> {
    for (const a of actions) {
      const job = this.jobs.find((j) => j.id === a.job);
      if (a.type === 'shrink') {
        await updateRecord(this.client, a.job, (r) => void (r.pending = { nodes: a.nodes, removed: a.removed, sentAt: Date.now() }), this.opts.root);
        this.emit({ at: Date.now(), type: 'shrink-sent', job: a.job, nodes: a.nodes });
        if (job?.record.channel === 'control') this.sendShrink(a, a.removed.length === 1 && vacating.has(a.removed[0]!));
        else await this.drain(a);
        continue;
      }
      const added = a.type === 'launch' ? a.nodes : a.added;
      const failed = await moveNodes(this.client, added.map((node) => ({ node, from: '', to: a.job })), this.opts.root, this.seenFinished);
      if (failed.length > 0) log.warn('manager', `could not give ${failed.map((m) => m.node).join(' ')} to ${a.job}; they are re-planned`);
      await this.record(a.job, { at: Date.now(), type: a.type, nodes: a.nodes.length }, false);
      this.emit({ at: Date.now(), type: a.type, job: a.job, nodes: a.nodes });
      // A job with a kind is told its node set after a launch too: it may have started before all its nodes joined.
      if (job?.record.channel === 'control') {
        const started = Date.now();
        const core = this.core;
        core?.executor.requestSent(a.job);
        void this.request(a.job, 'rescale', { nodes: a.nodes }).then(async (ack) => {
          if (ack && a.type === 'expand') {
            const tRescaleMs = ack.tRescaleMs ?? Date.now() - started;
            if (this.core === core) core?.rescaleMeasured(a.job, tRescaleMs);
            await this.record(a.job, { at: Date.now(), type: 'expand', nodes: ack.nodes.length, tRescaleMs }, false);
          }
          core?.executor.requestAcknowledged(a.job);
          this.trigger();
        });
      }
      if (failed.length > 0) this.trigger();
    }
  }

  private sendShrink(a: Extract<JobDecision, { type: 'shrink' }>, vacate: boolean): void {
    const started = Date.now();
    const ask = vacate ? this.request(a.job, 'vacate', { node: a.removed[0] }) : this.request(a.job, 'rescale', { nodes: a.nodes });
    void ask.then((ack) => {
      // A refused or timed-out rescale frees nothing: the job keeps what it holds, and is planned again.
      const held = ack?.nodes ?? [...(this.core?.executor.actualMap() ?? [])].filter(([, j]) => j === a.job).map(([n]) => n);
      this.acks.push({ job: a.job, nodes: held, tRescaleMs: ack?.tRescaleMs ?? Date.now() - started, measured: ack !== undefined });
      this.trigger();
    });
  }

  /** A task-pool shrink: release the nodes (they drain) and acknowledge once each has left the job. */
  private async drain(a: Extract<JobDecision, { type: 'shrink' }>): Promise<void> {
    const started = Date.now();
    await moveNodes(this.client, a.removed.map((node) => ({ node, from: a.job, to: '' })), this.opts.root);
    const left = new Set<string>();
    const done = (node: string) => {
      left.add(node);
      this.drainWatches.get(`${a.job}/${node}`)?.close();
      this.drainWatches.delete(`${a.job}/${node}`);
      if (left.size === a.removed.length) {
        this.acks.push({ job: a.job, nodes: a.nodes, tRescaleMs: Date.now() - started, measured: true });
        this.trigger();
      }
    };
    for (const node of a.removed) {
      const w = watchData(this.client, joinPath(this.paths.nodes, node), (d) => {
        const meta = d ? (JSON.parse(d.data.toString('utf8')) as { job?: string | null }) : null;
        if (!meta || meta.job !== a.job) done(node);
      });
      this.drainWatches.set(`${a.job}/${node}`, w);
    }
  }

  private async request(job: string, type: string, body: unknown): Promise<{ nodes: string[]; tRescaleMs?: number } | undefined> {
    try {
      const ack = (await requestJob(this.client, job, type, body, { timeoutMs: this.opts.rescaleTimeoutMs ?? 600_000, from: 'manager' }, this.opts.root)) as { nodes?: unknown; tRescaleMs?: unknown } | null;
      if (!ack || !Array.isArray(ack.nodes) || !ack.nodes.every((n) => typeof n === 'string')) throw new Error(`acknowledgement without a "nodes" list: ${JSON.stringify(ack)}`);
      return { nodes: ack.nodes as string[], ...(typeof ack.tRescaleMs === 'number' ? { tRescaleMs: ack.tRescaleMs } : {}) };
    } catch (err) {
      log.warn('manager', `job ${job} did not acknowledge ${type}: ${(err as Error).message}`);
      return undefined;
    }
  }

  private async record(jobId: string, event: RescaleEvent, clearPending: boolean): Promise<void> {
    this.source.put('rescales', { id: `${jobId}/${event.at}/${event.type}`, job: jobId, at: event.at, label: event.type, values: { nodes: event.nodes, ...(event.tRescaleMs !== undefined ? { tRescaleMs: event.tRescaleMs } : {}) } });
    await updateRecord(this.client, jobId, (r) => {
      r.events.push(event);
      if (clearPending) delete r.pending;
    }, this.opts.root).catch((err: unknown) => log.warn('manager', `could not record ${event.type} of ${jobId}`, err));
  }

  private emit(e: ExecutorEvent & { tRescaleMs?: number }): void {
    log.info('manager', `${e.type} ${e.job} → ${e.nodes.length} node(s)${e.tRescaleMs !== undefined ? ` (${e.tRescaleMs} ms)` : ''}`);
    this.events.emit('event', e);
  }

  /** Schedules a pass when the next job's T_gap (adapted to its measured T_rescale) runs out: it may be rescaled then. */
  private armGapTimer(core: ManagerCore): void {
    clearTimeout(this.gapTimer);
    if (this.opts.policy !== 'equipartition') return;
    const next = core.nextGapEnd(this.jobs, { ...this.policyOptions(), tGapMs: this.opts.tGapMs ?? 0 });
    if (next !== undefined) this.gapTimer = setTimeout(() => this.trigger(), next - Date.now() + 1);
  }
}

/** Failure warnings: a znode per warned node (see warnNode). */
export function warningsPath(root?: string): string {
  return joinPath(managerPaths(root).root, 'manager-warnings');
}

/** What a warning records: when the failure is predicted (ms since the epoch; null: soon, not said when) and when it was given. */
export interface NodeWarning { node: string; at: number | null; warnedAt: number }

/**
 * A failure is predicted on `node` (at `at`, ms since the epoch, when the predictor says): the
 * manager vacates it at once and gives it to no job until `clearWarning`. Warning a warned node
 * again updates the predicted time.
 */
export async function warnNode(client: CoordClient, node: string, root?: string, at?: number): Promise<void> {
  await mkdirp(client, warningsPath(root));
  const data = Buffer.from(JSON.stringify({ at: at ?? null, warnedAt: Date.now() }));
  try {
    await client.create(joinPath(warningsPath(root), node), data);
  } catch (err) {
    if (!isCoordError(err, 'NODE_EXISTS')) throw err;
    await client.setData(joinPath(warningsPath(root), node), data);
  }
}

/** The nodes with a failure warning now, with their predicted times. */
export async function listWarnings(client: CoordClient, root?: string): Promise<NodeWarning[]> {
  const out: NodeWarning[] = [];
  for (const node of (await childrenOrNone(client, warningsPath(root))).sort()) {
    const read = await readOrNull(client, joinPath(warningsPath(root), node));
    if (!read) continue;
    let parsed: { at?: unknown; warnedAt?: unknown } = {};
    try {
      parsed = JSON.parse(read.data.toString('utf8') || '{}') as typeof parsed;
    } catch {
      // an older warning without data
    }
    out.push({ node, at: typeof parsed.at === 'number' ? parsed.at : null, warnedAt: typeof parsed.warnedAt === 'number' ? parsed.warnedAt : read.stat.ctime });
  }
  return out;
}

/** The node is healthy again: the manager may give it to jobs (a malleable job expands onto it). Returns whether it was warned. */
export async function clearWarning(client: CoordClient, node: string, root?: string): Promise<boolean> {
  try {
    await client.delete(joinPath(warningsPath(root), node));
    return true;
  } catch (err) {
    if (!isCoordError(err, 'NO_NODE')) throw err;
    return false;
  }
}
