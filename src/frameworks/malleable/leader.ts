/**
 * The malleable job's leader: drives iterations (every boundary is a sync point), and at a sync point
 * serves rescale requests (shrink: balance objects off the leaving nodes, checkpoint, let them go,
 * install the mapping; expand: admit the new nodes, balance onto them, checkpoint), periodic
 * checkpoints and balancing. When a node holding objects vanishes it rolls every member back to the
 * last committed checkpoint on the nodes that remain. A new leader starts the same way, from the
 * durable state alone.
 */
import { performance } from 'node:perf_hooks';
import { drainNode } from '../../runtime/scheduler/index.js';
import type { LeaderContext, LeaderRole } from '../../runtime/kinds/job-kind.js';
import { log as rootLog, type Log } from '../../util/log.js';
import { NO_METRICS } from '../../runtime/metrics/metrics-registry.js';
import { rescaleRecorder } from './rescale-histograms.js';
import { RESCALE_PHASES_LIST, rescalePhaseEvent } from './rescale-events.js';
import { DurableState } from './durable-state.js';
import type { AnyMalleableApp } from './malleable-app.js';
import type { MalleableMember } from './member.js';
import { MemberCalls, NodeLost } from './member-calls.js';
import { MANAGER_NAME, requestResize } from './manager/manager-store.js';
import { NodeAcquisition } from './node-acquisition.js';
import { balancePlacement, blockPlacement, threadsOn } from './placement.js';
import type { BlobRef } from '../../data/blob-directory.js';
import type { CheckpointManifest, Command, Mapping, RunReply } from './protocol.js';
import { parseRequest, targetNodes, type RescaleRequest } from './rescale-plan.js';
import type { MalleableSpec, MalleableStats, RescaleAck } from './runtime-options.js';

interface Queued {
  req: RescaleRequest;
  resolve(ack: unknown): void;
  reject(err: Error): void;
}

const now = () => performance.now();
/** How long a checkpoint waits for the discards of superseded ones to finish (ms). */
const DISCARD_WAIT_MS = 5_000;
/** Consecutive failed recoveries (other than lost nodes) before the job fails. */
const MAX_FAILURES = 5;

/** How the leader lets a node go (the core's drain; a simulation passes its own). */
export type ReleaseNode = (node: string) => Promise<unknown>;

export function malleableLeader(ctx: LeaderContext, app: AnyMalleableApp, spec: MalleableSpec, release?: ReleaseNode): LeaderRole {
  const leader = new MalleableLeader(ctx, app, spec, release ?? ((node) => drainNode(ctx.client, node)));
  void leader.run();
  return { stop: () => leader.stop(), onControl: (type, body) => leader.onControl(type, body) };
}

class MalleableLeader {
  private readonly own: MalleableMember;
  private readonly calls: MemberCalls;
  private readonly nodes: NodeAcquisition;
  private readonly state: DurableState;
  /** Iterations to run: the application's count, or fewer once its convergence test ended it. */
  private total: number;
  private readonly objects: number;
  private epoch = 0;
  private map: Mapping = { nodes: [], owner: [], threads: [], thread: [] };
  private iteration = 0;
  private expect = new Map<string, number>();
  private settled = true;
  private loads: number[];
  private manifest: CheckpointManifest | null = null;
  private readonly requests: Queued[] = [];
  private readonly leaving = new Set<string>();
  private readonly scheduled: Array<{ iteration: number; nodes: number }>;
  private stopped = false;
  private readonly offLeft: () => void;
  private readonly pauseAt: number[];
  private wake: (() => void) | undefined;
  private readonly stats: MalleableStats;
  private checkpointSeq = 0;
  private discarding: Promise<void> = Promise.resolve();
  private readonly log: Log;
  private readonly recordRescale: (ack: RescaleAck) => void;

  constructor(private readonly ctx: LeaderContext, private readonly app: AnyMalleableApp, private readonly spec: MalleableSpec, private readonly release: ReleaseNode) {
    this.own = ctx.member as MalleableMember;
    this.log = ctx.log ?? rootLog.child({ job: ctx.spec.id, node: ctx.nodeId });
    this.recordRescale = rescaleRecorder(ctx.metrics ?? NO_METRICS);
    this.calls = new MemberCalls(ctx, this.own, (node) => this.leaving.add(node));
    this.nodes = new NodeAcquisition(ctx, () => this.calls.live(), () => this.stopped);
    this.offLeft = ctx.membership.on('left', (m) => {
      this.leaving.delete(m.id);
      this.wake?.();
    });
    this.state = new DurableState(ctx.client, ctx.paths);
    this.total = app.iterations(spec.params);
    this.objects = app.objects(spec.params);
    this.loads = new Array<number>(this.objects).fill(Infinity);
    this.scheduled = [...(spec.runtime?.rescaleAt ?? [])];
    this.pauseAt = [...(spec.runtime?.pauseAt ?? [])];
    this.stats = { iterations: this.total, objects: this.objects, rescales: [], rollbacks: 0, checkpoints: 0, iterationMs: [], nodesPerIteration: [], threadsPerIteration: [], resizeRequests: [], syncPoints: 0, balancings: 0 };
  }

  stop(): void {
    this.stopped = true;
    this.offLeft();
    this.calls.stop();
    this.wake?.();
    for (const q of this.requests.splice(0)) q.reject(new Error('the leader stopped; the request is served again by the next leader'));
  }

  onControl(type: string, body: unknown): Promise<unknown> {
    if (type === 'progress') return Promise.resolve({ iteration: this.iteration, iterations: this.total, nodes: [...this.map.nodes], epoch: this.epoch, rescales: this.stats.rescales.length, rollbacks: this.stats.rollbacks });
    const req = parseRequest(type, body);
    void this.nodes.ask(req, this.map.nodes);
    return new Promise((resolve, reject) => {
      this.requests.push({ req, resolve, reject });
      this.wake?.();
    });
  }

  async run(): Promise<void> {
    let failures = 0;
    let restore = true;
    try {
      const stored = await this.state.load();
      this.epoch = stored.epoch;
      this.manifest = stored.manifest;
      if (stored.history) Object.assign(this.stats, stored.history);
      this.stats.rescales.forEach((ack, i) => this.publishRescale(ack, i + 1)); // the predecessors' rescales, on this node's dashboard list
      // The first leader waits (bounded) for the nodes the job was started with; a later one takes
      // the members there are — the job may have been shrunk since it started.
      const want = Math.max(1, this.ctx.spec.nodes.requested);
      if (stored.epoch === 0) await this.nodes.until(() => this.calls.live().size >= want, this.spec.runtime?.startWaitMs ?? 5_000);
    } catch (err) {
      return this.fail(err);
    }
    while (!this.stopped) {
      try {
        if (restore) await this.rollback();
        restore = false;
        if (this.iteration >= this.total) return await this.finish();
        await this.syncPoint();
        if (this.stopped) return;
        await this.runIteration();
        failures = 0;
      } catch (err) {
        if (this.stopped) return;
        restore = true;
        if (!(err instanceof NodeLost) && ++failures >= MAX_FAILURES) return this.fail(err);
        this.log.warn('malleable', `job ${this.ctx.spec.id}: ${(err as Error).message}; rolling back to ${this.manifest ? `the checkpoint at iteration ${this.manifest.iteration}` : 'the start'}`);
      }
    }
  }

  private async fail(err: unknown): Promise<void> {
    if (this.stopped) return;
    const error = `malleable job ${this.ctx.spec.id} (${this.app.name}): ${err instanceof Error ? err.message : String(err)}`;
    this.log.error('malleable', error);
    await this.ctx.finish({ status: 'failed', error, finishedAt: Date.now() }).catch(() => false);
  }

  /** Every live member drops what it has and takes its share of the last checkpoint (or builds it afresh). */
  private async rollback(): Promise<void> {
    const first = this.map.nodes.length === 0;
    this.epoch++;
    if (!first) this.stats.rollbacks++;
    await this.saveState();
    const live = [...this.calls.live()].sort();
    const nodes = live.filter((n) => !this.leaving.has(n));
    if (nodes.length === 0) throw new Error('no member left to run on');
    this.map = blockPlacement(this.objects, nodes, nodes.map((n) => this.threadsOf(n)));
    // Every live member drops what it held; one outside the new mapping (leaving) that goes meanwhile held nothing of it.
    const map = this.map;
    const replies = await this.calls.all<{ sentTo: string[] }>(live, { type: 'restore', map, manifest: this.manifest }, this.epoch, (n) => !map.nodes.includes(n));
    this.countExpected(replies);
    this.settled = this.manifest !== null;
    this.iteration = this.manifest?.iteration ?? 0;
    this.loads.fill(Infinity);
  }

  /**
   * How many object threads `node` runs for the job: one per worker thread it has (its pool is sized by
   * its usable cores, cgroup quota included), at most `runtime.workers`.
   */
  private threadsOf(node: string): number {
    const workers = this.ctx.membership.view().get(node)?.meta?.workers;
    const cores = Number.isInteger(workers) && workers! >= 1 ? workers! : 1;
    return Math.min(cores, this.spec.runtime?.workers ?? cores);
  }

  /** The command installing the mapping on `node`, with the threads it runs (its own in the mapping, or as a joiner). */
  private configure(node: string): Command {
    return { type: 'configure', map: this.map, threads: threadsOn(this.map, node) || this.threadsOf(node) };
  }

  private countExpected(replies: ReadonlyArray<{ sentTo: string[] }>): void {
    this.expect = new Map();
    for (const r of replies) for (const n of r.sentTo) this.expect.set(n, (this.expect.get(n) ?? 0) + 1);
  }

  private checkAlive(): void {
    const live = this.calls.live();
    for (const n of this.map.nodes) if (!live.has(n)) throw new NodeLost(n);
  }

  /** Iterations to run before the next sync point: up to `syncEvery`, ending at the next scheduled event. */
  private spanLength(): number {
    const opts = this.spec.runtime ?? {};
    let end = Math.min(this.total, this.iteration + (opts.syncEvery ?? 1));
    for (const it of [...this.pauseAt, ...this.scheduled.map((s) => s.iteration)]) if (it > this.iteration && it < end) end = it;
    for (const every of [opts.checkpointEvery, opts.lbEvery]) {
      if (every) end = Math.min(end, (Math.floor(this.iteration / every) + 1) * every);
    }
    return Math.max(1, end - this.iteration);
  }

  private async runIteration(): Promise<void> {
    this.checkAlive();
    const settled = this.settled;
    const count = this.spanLength();
    const replies = await this.calls.all<RunReply>(this.map.nodes, (n) => ({ type: 'run', iteration: this.iteration, count, expect: settled ? 0 : this.expect.get(n) ?? 0 }), this.epoch);
    this.countExpected(replies);
    // An object's load is its fastest step since the last balancing: a step the OS preempted (or that
    // paid for compilation) says nothing about the object, and a shared machine preempts often.
    for (const r of replies) for (let k = 0; k < r.loads.length; k += 2) this.loads[r.loads[k]!] = Math.min(this.loads[r.loads[k]!]!, r.loads[k + 1]!);
    this.settled = false;
    // Every member that ended the job ended it before the same iteration (the same test on the same reductions).
    const ended = replies.find((r) => r.ended !== undefined)?.ended;
    const ran = ended === undefined ? count : ended - this.iteration;
    for (let k = 0; k < ran; k++) {
      this.stats.iterationMs[this.iteration + k] = Math.max(...replies.map((r) => r.times[k] ?? 0));
      this.stats.nodesPerIteration[this.iteration + k] = this.map.nodes.length;
      this.stats.threadsPerIteration[this.iteration + k] = this.map.threads.reduce((a, b) => a + b, 0);
    }
    this.iteration += ran;
    if (ended !== undefined) {
      this.total = this.stats.iterations = ended;
      this.log.info('malleable', `job ${this.ctx.spec.id}: ${this.app.name} is done after ${ended} iteration(s)`);
    }
    const wishes = replies.flatMap((r) => (r.resize ? [r.resize] : [])).sort((a, b) => b.iteration - a.iteration || a.from - b.from);
    if (wishes[0] && ended === undefined) await this.evolve(wishes[0]);
  }

  /**
   * An object asked to run on between `min` and `max` nodes (an evolving job). Under the resource
   * manager the request goes to it (it takes the bounds and resizes the job as for an operator);
   * otherwise the job rescales itself into them at the next sync point.
   */
  private async evolve(wish: NonNullable<RunReply['resize']>): Promise<void> {
    const last = this.stats.resizeRequests.at(-1);
    if (last && wish.iteration <= last.iteration) return; // the same request, made again after a rollback
    const { min, max, iteration } = wish;
    this.stats.resizeRequests.push({ iteration, min, max });
    this.log.info('malleable', `job ${this.ctx.spec.id}: object ${wish.from} asks for ${min}–${max} node(s) after iteration ${iteration}`);
    if (this.ctx.spec.managedBy === MANAGER_NAME) {
      await requestResize(this.ctx.client, this.ctx.spec.id, min, max).catch((err: Error) => this.log.warn('malleable', `could not pass the resize request to the resource manager: ${err.message}`));
      return;
    }
    const count = Math.min(Math.max(this.map.nodes.length, min), max);
    if (count === this.map.nodes.length) return;
    const req: RescaleRequest = { type: 'rescale', count };
    void this.nodes.ask(req, this.map.nodes);
    this.requests.push({ req, resolve: () => undefined, reject: () => undefined });
  }

  /** Every halo batch for the next iteration has arrived: objects and their messages can be moved or saved. */
  private async settle(): Promise<void> {
    if (this.settled) return;
    await this.calls.all(this.map.nodes, (n) => ({ type: 'settle', iteration: this.iteration, expect: this.expect.get(n) ?? 0 }), this.epoch);
    this.settled = true;
  }

  private async syncPoint(): Promise<void> {
    this.checkAlive();
    this.stats.syncPoints++;
    const due = this.scheduled.findIndex((s) => s.iteration === this.iteration);
    if (due >= 0) {
      const [s] = this.scheduled.splice(due, 1);
      const req: RescaleRequest = { type: 'rescale', count: s!.nodes };
      void this.nodes.ask(req, this.map.nodes);
      this.requests.push({ req, resolve: () => undefined, reject: () => undefined });
    }
    const pause = this.pauseAt.indexOf(this.iteration);
    if (pause >= 0) this.pauseAt.splice(pause, 1);
    let paused = pause >= 0;
    for (;;) {
      const q = this.requests[0];
      if (q && !this.stopped) {
        paused &&= q.req.type !== 'resume';
        await this.serve(q);
        continue;
      }
      if (!paused || this.stopped) break;
      await new Promise<void>((resolve) => (this.wake = resolve)); // a request, or a member lost
      this.checkAlive();
    }
    // This node was rescaled away (or the job stopped): it must not take its own node back as a joiner.
    if (this.stopped) return;
    const opts = this.spec.runtime ?? {};
    const joiners = [...this.calls.live()].filter((n) => !this.map.nodes.includes(n) && !this.leaving.has(n));
    const leavers = this.map.nodes.filter((n) => this.leaving.has(n));
    if (joiners.length > 0 || leavers.length > 0) {
      // Nodes the scheduler gave or took without a request: expand onto them, or evacuate them.
      const target = [...this.map.nodes.filter((n) => !this.leaving.has(n)), ...joiners].sort();
      if (target.length > 0) return void (await this.reconfigure(target));
    }
    if (opts.lbEvery && this.iteration > 0 && this.iteration % opts.lbEvery === 0) {
      await this.migrate(this.map.nodes);
      this.stats.balancings++;
    }
    if (opts.checkpointEvery && this.iteration % opts.checkpointEvery === 0 && this.manifest?.iteration !== this.iteration) await this.checkpoint();
  }

  /** Serves the first queued request; it stays queued (served again after a rollback) if this throws. */
  private async serve(q: Queued): Promise<void> {
    let ack: unknown;
    if (q.req.type === 'checkpoint') ack = { iteration: await this.checkpoint() };
    else if (q.req.type === 'resume') ack = { iteration: this.iteration };
    else {
      await this.nodes.awaitWanted(q.req, this.map.nodes, this.spec.runtime?.joinWaitMs ?? 30_000);
      const target = targetNodes(q.req, this.map.nodes, this.calls.live(), this.ctx.nodeId);
      ack = await this.reconfigure(target);
    }
    this.requests.shift();
    q.resolve(ack);
    if (!this.map.nodes.includes(this.ctx.nodeId)) this.leaveAfterAck();
  }

  /** Rescale to `target`, phase by phase (seed 003 Table II), and say what it took. */
  private async reconfigure(target: string[]): Promise<RescaleAck> {
    const t0 = now();
    const startedAt = Date.now();
    const phases = { lb: 0, checkpoint: 0, reconnect: 0, restore: 0 };
    const before = this.map.nodes;
    const joiners = target.filter((n) => !before.includes(n));
    const leavers = before.filter((n) => !target.includes(n));
    if (joiners.length === 0 && leavers.length === 0) {
      return { nodes: [...before], tRescaleMs: 0, phases, iteration: this.iteration, kind: 'none' }; // already so (a request served again)
    }
    let t = now();
    // Reconnect (in): the new members learn the current mapping and epoch. One that has left again by then
    // (given and taken back at once) holds nothing yet: the rescale goes on without it.
    const lost = new Set<string>();
    await this.calls.all(joiners, (n) => this.configure(n), this.epoch, (n) => {
      lost.add(n);
      return true;
    });
    if (lost.size > 0) {
      this.log.info('malleable', `job ${this.ctx.spec.id}: ${[...lost].join(' ')} left again before the rescale took it`);
      return this.reconfigure(target.filter((n) => !lost.has(n)));
    }
    phases.reconnect += now() - t;
    t = now();
    await this.migrate(target);
    phases.lb = now() - t;
    t = now();
    await this.checkpoint();
    phases.checkpoint = now() - t;
    t = now();
    // Reconnect (out): the leaving nodes hold nothing now; let them go and wait until they have left.
    for (const n of leavers) if (n !== this.ctx.nodeId) await this.release(n).catch((err: Error) => this.log.warn('malleable', `could not release ${n}: ${err.message}`));
    await this.nodes.until(() => leavers.every((n) => n === this.ctx.nodeId || !this.calls.live().has(n)), 30_000);
    for (const n of leavers) this.leaving.delete(n);
    phases.reconnect += now() - t;
    t = now();
    // Restore: every member installs the final mapping (its location table) and says what it holds.
    const held = await this.calls.all<{ objects: number }>(this.map.nodes, (n) => this.configure(n), this.epoch);
    const count = held.reduce((a, h) => a + h.objects, 0);
    if (count !== this.objects) throw new Error(`after the rescale the members hold ${count} objects, not ${this.objects}`);
    phases.restore = now() - t;
    const kind = joiners.length > 0 && leavers.length > 0 ? 'replace' : joiners.length > 0 ? 'expand' : leavers.length > 0 ? 'shrink' : 'none';
    const ack: RescaleAck = { nodes: [...this.map.nodes], tRescaleMs: now() - t0, phases, iteration: this.iteration, kind, startedAt };
    this.stats.rescales.push(ack);
    this.recordRescale(ack);
    this.publishRescale(ack, this.stats.rescales.length);
    await this.saveState();
    this.log.info('malleable', `${kind} to ${target.length} node(s) at iteration ${this.iteration} in ${ack.tRescaleMs.toFixed(1)} ms`);
    return ack;
  }

  /** The rescale and its phases on the dashboard (the leader's node publishes them with its stats). */
  private publishRescale(ack: RescaleAck, index: number): void {
    const event = rescalePhaseEvent(ack, index);
    if (event) this.own.noteEvent(RESCALE_PHASES_LIST, event);
  }

  /** Epoch, last checkpoint and stats, fenced against a newer leader. */
  private saveState(): Promise<void> {
    const { rescales, rollbacks, checkpoints, resizeRequests } = this.stats;
    return this.state.save({ epoch: this.epoch, manifest: this.manifest, history: { rescales, rollbacks, checkpoints, resizeRequests } });
  }

  /** The leader's own node was rescaled away: once acknowledged, it leaves; the next leader resumes from the checkpoint. */
  private leaveAfterAck(): void {
    this.stopped = true;
    void this.release(this.ctx.nodeId).catch((err: Error) => this.log.warn('malleable', `could not release the leader's node: ${err.message}`));
  }

  /** Balances the objects over the threads of `nodes` with the measured loads and moves those that change thread or node. */
  private async migrate(nodes: string[]): Promise<void> {
    await this.settle();
    const measured = this.spec.runtime?.loads !== 'uniform' && this.loads.every((l) => l < Infinity);
    const loads = measured ? this.loads : this.loads.map(() => 1);
    const next = balancePlacement(this.spec.runtime?.strategy ?? 'refine', loads, this.map, nodes, (n) => this.threadsOf(n));
    const involved = [...new Set([...this.map.nodes, ...nodes])];
    await this.calls.all(involved, { type: 'migrate', map: next, iteration: this.iteration }, this.epoch);
    this.map = next;
    this.loads.fill(Infinity);
  }

  /** A coordinated checkpoint at this sync point, committed by writing its manifest; the one it supersedes is discarded. */
  private async checkpoint(): Promise<number> {
    await this.settle();
    await this.discardsDone(); // never discard while the same bytes may be stored again
    const nodes = this.map.nodes;
    // Unique per checkpoint: a new leader, and every rollback, starts a new epoch.
    const scope = `ckpt.${this.epoch}.${++this.checkpointSeq}`;
    const stored = nodes.map((n) => this.calls.call<{ ref: BlobRef; indices: number[] }>(n, { type: 'checkpoint', iteration: this.iteration, peers: nodes.filter((p) => p !== n), scope }, this.epoch)
      .then((p) => ({ node: n, ref: p.ref, indices: p.indices })));
    let parts: CheckpointManifest['parts'];
    try {
      parts = await Promise.all(stored);
    } catch (err) {
      // Never committed: each part that is stored all the same goes as soon as it is (a part whose
      // writer died before answering stays until the job is removed).
      for (const part of stored) void part.then((p) => this.discard({ iteration: this.iteration, parts: [p], takenAt: 0, scope }), () => undefined);
      throw err;
    }
    const superseded = this.manifest;
    this.manifest = { iteration: this.iteration, parts, takenAt: Date.now(), scope };
    this.stats.checkpoints++;
    await this.saveState();
    if (superseded) this.discard(superseded);
    return this.iteration;
  }

  /**
   * Drops the references of a superseded checkpoint (off the critical path, one at a time): its
   * blobs leave the directory and this node's store at once (unless a newer part has the same bytes),
   * and the other holders' stores when they next checkpoint (or collect). Only the leader discards,
   * and only after the newer manifest is durable, so a rollback always finds its checkpoint.
   */
  private discard(old: CheckpointManifest): void {
    const data = this.ctx.data;
    if (!data || old.scope === undefined) return;
    const scope = old.scope;
    this.discarding = this.discarding
      .then(() => Promise.all(old.parts.map((p) => data.discard(p.ref, this.ctx.spec.id, scope))))
      .then(() => undefined, (err: unknown) => this.log.warn('malleable', `could not discard the checkpoint at iteration ${old.iteration}`, err));
  }

  /** Waits for the discards under way, but never long: a stuck coordination request must not stop the job. */
  private async discardsDone(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.discarding, new Promise<void>((resolve) => (timer = setTimeout(resolve, DISCARD_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private async finish(): Promise<void> {
    const replies = await this.calls.all<{ summaries: Array<[number, unknown]> }>(this.map.nodes, { type: 'collect' }, this.epoch);
    const summaries = new Array<unknown>(this.objects);
    let seen = 0;
    for (const r of replies) for (const [i, s] of r.summaries) {
      if (summaries[i] !== undefined) throw new Error(`object ${i} was held twice`);
      summaries[i] = s;
      seen++;
    }
    if (seen !== this.objects) throw new Error(`${this.objects - seen} objects are missing at the end`);
    const result = this.app.result(summaries, this.spec.params);
    for (const q of this.requests.splice(0)) q.reject(new Error('the job has finished'));
    this.stopped = true;
    const written = await this.ctx.finish({ status: 'done', value: { result, stats: this.stats }, finishedAt: Date.now(), completions: this.objects });
    // The result is durable: nothing rolls back to the last checkpoint any more.
    if (written && this.manifest) this.discard(this.manifest);
    await this.discardsDone();
  }
}
