/**
 * One member of a running workflow, without I/O: dispatcher of the partitions it owns, shard of the
 * File Location Service for the files it owns, worker running its READY tasks, and — on the leader
 * — the submitter, which decides the view (epoch, members) and counts finished tasks per partition.
 * The job kind (and the simulations in the tests) feed it messages, task completions and views,
 * and carry out what it asks through `EngineIO`.
 */
import type { LayerBody } from '../../runtime/kinds/job-kind.js';
import { Dispatcher, type DispatchMode, type JournalState, type Reconciled } from './dispatcher.js';
import { LocationShard, type FileLocation } from './location-shard.js';
import { itemsOf, sliceMessage, type View, type WorkflowMessage } from './protocol.js';
import { LatencyProbes } from './latency-probes.js';
import { Rendezvous } from './rendezvous.js';
import { AME_UNITS, unitRoles, unitsProblem, type AmeUnits } from './ame-units.js';
import { type Workflow } from './workflow.js';
import { WorkerTasks, type StolenTask } from './worker-tasks.js';

export interface EngineIO {
  send(to: string, body: LayerBody): void;
  /** Run `task` (fetch its remote inputs, execute, store outputs), then call taskFinished / taskFailed / inputLost. `attempt` counts from 1. */
  run(task: number, inputs: [number, FileLocation | 'shared'][], recreate: boolean, attempt: number): void;
  readJournal(): JournalState;
  /** Make these completions durable before they are reported (`recreated`: a re-run that recreated lost files). */
  journal(done: [number, string][], recreated: boolean): void;
  /** Leader only: every task finished (or one failed for good). */
  finish(outcome: { ok: true } | { ok: false; error: string }): void;
  random(): number;
  /** Milliseconds, for the location service's latency figures (optional: simulations leave it out). */
  now?(): number;
  /**
   * Run `flush` soon (a node passes setImmediate): completions and messages of one turn of the event
   * loop then leave as one batch per peer. Without it every entry point flushes at once (simulations).
   */
  defer?(flush: () => void): void;
}

export interface EngineOptions {
  mode?: DispatchMode;
  partitions?: number;
  /** Tasks run at once on this member. */
  slots?: number;
  maxAttempts?: number;
  stealing?: boolean;
  /** Files in the shared directory before the run (workflow inputs always are). */
  saved?: Set<number>;
  /**
   * Short tasks: beyond `slots`, more tasks are taken while the known work of those taken is under
   * `budget` seconds (at most `max` at once), so that tasks of a few microseconds travel to the
   * threads in bundles instead of one message each. Undefined: `slots` only (commands, functions).
   */
  short?: { seconds: (task: number) => number; budget: number; max: number };
  /** What this member offers tasks that say what they need (command tasks): cores and memory (MiB). */
  capacity?: Capacity;
  /** Location-service shards and dispatchers per group of members (ame-units.ts; default as AME ran: 1 and 1 per 64). */
  units?: AmeUnits;
  /** What a task needs while it runs, or undefined for tasks that take a slot only (replays, functions). */
  needs?: (task: number) => Capacity | undefined;
  /** Tasks or files handled per turn of the event loop, with `EngineIO.defer` (default TURN_ITEMS). */
  turnItems?: number;
}

export interface Capacity {
  cores: number;
  memoryMb: number;
}

const fits = (need: Capacity, room: Capacity) => need.cores <= room.cores && need.memoryMb <= room.memoryMb;

export interface EngineStats {
  ready: number; waiting: number; running: number; finished: number; retries: number;
  steals: number; stolenIn: number; queries: number; updates: number; dispatched: number;
  /** Tasks this member ran to completion for the first time, and again to recreate lost files. */
  completed: number; recreated: number;
  /**
   * Milliseconds (samples, Fig. 14): round trip of a query batch and of an update batch to a remote shard
   * (one probe out per shard at a time), and from asking where a file is to being told, when it did not exist yet.
   */
  queryMs: number[]; updateMs: number[]; waitMs: number[];
}

/**
 * Tasks or files a member handles in one turn of its event loop (with `EngineIO.defer`, on a node): the
 * rest of what arrived waits for the next turn, so that timers and sockets (the coordination session's
 * heartbeats) get their turn too. At a million tasks one assignment or one batch of location queries
 * handled whole held a node's loop longer than its ZooKeeper session lives, and the node died.
 */
export const TURN_ITEMS = 8_000;

/** A thief takes at most this many tasks in one steal (half of what is READY, up to this). */
export const MAX_STOLEN = 2_000;

/** Where completion markers "are": a holder that never leaves (a marker is never lost, never fetched). */
export const MARKER_NODE = '*';

/** `wf-notify` is a `wf-located` sent when a waited-for file appeared (kept apart for the latency figures). */
type Batch = 'wf-query' | 'wf-update' | 'wf-done' | 'wf-located' | 'wf-notify';

export class WorkflowEngine {
  readonly worker: WorkerTasks;
  readonly shard = new LocationShard();
  readonly dispatcher: Dispatcher;
  private view: View | undefined;
  /** Under the current view: the location-service shards' ring, and the dispatchers' ring. */
  private ring: Rendezvous | undefined;
  private dispatchRing: Rendezvous | undefined;
  /** Owners under the current view, filled as asked (cleared when the view changes). */
  private fileOwners: string[] = [];
  private partitionOwners: string[] = [];
  private acceptFrom = 0;
  private readonly recreating = new Set<number>();
  private readonly attempts = new Map<number, number>();
  /** Tasks stolen from here whose thief has not confirmed them yet. */
  private readonly given = new Map<number, string>();
  /** Completions to journal (once per flush, before their reports leave). */
  private journalDone: [number, string][] = [];
  private journalRecreated: [number, string][] = [];
  /**
   * Partitions whose done count changed since the last report to the leader. Reported on the next tick,
   * or at once when one of them is complete (the leader learns the end without waiting): one report per
   * batch of completions would make the leader of thousands of members handle a message per batch.
   */
  private readonly countsChanged = new Set<number>();
  private countsDue = false;
  private flushScheduled = false;
  private readonly latency: LatencyProbes;
  private readonly outbox = new Map<string, Map<Batch, unknown[]>>();
  /** Messages to handle (from peers and from this member itself), in order of arrival; `inboxHead` is the next. */
  private inbox: [string, WorkflowMessage][] = [];
  private inboxHead = 0;
  /** Items handled per turn (`TURN_ITEMS`; infinite without `EngineIO.defer`: a simulation handles all at once). */
  private readonly turnItems: number;
  private flushing = false;
  private stealOut = false;
  /** The last steal came back empty: wait for the next tick before asking again. */
  private stealBackoff = false;
  private leaderCounts: Int32Array | undefined;
  /** When each task not yet started here arrived (kept only with a clock, `EngineIO.now`). */
  private readonly arrivedAt = new Map<number, number>();
  private finished = false;
  /** The epoch of the last view this member announced as leader. */
  private announced = 0;
  private paused = false;
  /** Cores and memory taken by the tasks running here that said what they need. */
  private readonly used: Capacity = { cores: 0, memoryMb: 0 };
  private readonly claimed = new Map<number, Capacity>();
  /** What each other member offers (told with wf-capacity on every view). */
  private readonly peerCapacity = new Map<string, Capacity>();
  /** Tasks too big for this member, waiting to learn of a member they fit. */
  private readonly parked = new Set<number>();
  /** Members each task failed on (a retry goes elsewhere). */
  private readonly failedOn = new Map<number, string[]>();
  readonly stats: EngineStats = { ready: 0, waiting: 0, running: 0, finished: 0, retries: 0, steals: 0, stolenIn: 0, queries: 0, updates: 0, dispatched: 0, completed: 0, recreated: 0, queryMs: [], updateMs: [], waitMs: [] };
  private readonly opts: Required<Omit<EngineOptions, 'saved' | 'short' | 'capacity' | 'needs' | 'turnItems'>> & Pick<EngineOptions, 'capacity' | 'needs'>;
  private readonly short: EngineOptions['short'];
  /** Files in the shared directory before the run (and final outputs of such tasks that added tasks read). */
  private readonly saved: Set<number>;

  constructor(readonly workflow: Workflow, readonly self: string, private readonly io: EngineIO, options: EngineOptions = {}) {
    this.opts = { mode: 'decentralized', partitions: 256, slots: 1, maxAttempts: 3, stealing: true, units: AME_UNITS, ...options };
    const wrong = unitsProblem(this.opts.units);
    if (wrong) throw new Error(wrong);
    this.short = options.short;
    this.latency = new LatencyProbes(self, io.now?.bind(io), this.stats);
    this.saved = options.saved ?? new Set<number>();
    this.worker = new WorkerTasks(workflow, self, (f) => workflow.files[f]!.producer < 0 || this.saved.has(f));
    this.dispatcher = new Dispatcher(workflow, this.opts.partitions, this.opts.mode, self);
    this.turnItems = io.defer ? (options.turnItems ?? TURN_ITEMS) : Infinity;
  }

  get currentView(): View | undefined {
    return this.view;
  }

  /** Leader: announce a view of these members (this one included). */
  lead(members: string[]): void {
    // After the last view this leader announced too: two views in one millisecond (a member that left right after the first)
    // must not share an epoch, or the second (without it) is ignored and the reconcile waits for it for ever.
    const epoch = Math.max(Date.now(), (this.view?.epoch ?? 0) + 1, this.announced + 1);
    this.announced = epoch;
    const view: View = { epoch, members: [...new Set([...members, this.self])].sort(), leader: this.self };
    this.leaderCounts = new Int32Array(this.opts.partitions);
    for (const m of view.members) this.post(m, { type: 'wf-view', view });
    this.flush();
  }

  /** A message from a peer: handled in order with the others, a bounded number of tasks and files per turn (a large one in pieces). */
  onMessage(from: string, body: LayerBody): void {
    for (const piece of sliceMessage(body as unknown as WorkflowMessage)) this.inbox.push([from, piece]);
    this.flush();
  }

  /** Messages received and not handled yet (tasks and files). */
  get backlog(): number {
    let items = 0;
    for (let i = this.inboxHead; i < this.inbox.length; i++) items += itemsOf(this.inbox[i]![1]);
    return items;
  }

  private handle(from: string, m: WorkflowMessage): void {
    switch (m.type) {
      case 'wf-view': return this.adoptView(m.view);
      case 'wf-assign':
        if (m.epoch < this.acceptFrom) return;
        this.arrived(m.tasks);
        for (const t of m.tasks) {
          if (m.recreate) this.recreating.add(t);
          this.queryAll(this.worker.assign(t));
        }
        return;
      case 'wf-query':
        for (const f of m.files) {
          const answer = this.shard.query(f, from);
          if (answer.state === 'VALID') this.batch(from, 'wf-located', [f, answer.location]);
        }
        if (m.probe !== undefined) this.post(from, { type: 'wf-ack', probe: m.probe });
        return;
      case 'wf-update':
        for (const [f, location] of m.files) for (const w of this.shard.update(f, location)) this.batch(w, 'wf-notify', [f, location]);
        if (m.probe !== undefined) this.post(from, { type: 'wf-ack', probe: m.probe });
        return;
      case 'wf-ack': return this.latency.acknowledged(m.probe);
      case 'wf-located':
        for (const [f, location] of m.files) {
          this.worker.located(f, location);
          this.latency.answered(f, m.waited === true);
        }
        return;
      case 'wf-done': return this.doneHere(from, m.tasks);
      case 'wf-held?':
        this.acceptFrom = Math.max(this.acceptFrom, m.epoch);
        return this.post(from, { type: 'wf-held', epoch: m.epoch, tasks: [...this.worker.holding(), ...this.given.keys(), ...this.parked] });
      case 'wf-held':
        if (this.dispatcher.heldBy(from, m.epoch, m.tasks)) this.reconcile();
        return;
      case 'wf-count':
        if (!this.leaderCounts || !this.view || m.epoch !== this.view.epoch) return;
        for (const [p, n] of m.partitions) this.leaderCounts[p] = Math.max(this.leaderCounts[p]!, n);
        return this.checkFinished();
      case 'wf-failed':
        if (this.leaderCounts && !this.finished) {
          this.finished = true;
          this.io.finish({ ok: false, error: `task ${this.workflow.tasks[m.task]!.id} ${m.error}` });
        }
        return;
      case 'wf-capacity':
        this.peerCapacity.set(from, { cores: m.cores, memoryMb: m.memoryMb });
        return this.unpark();
      case 'wf-push':
        this.arrived(m.tasks.map((s) => s.task));
        for (const s of m.tasks) this.took(s);
        this.queryAll(this.worker.adopt(m.tasks as StolenTask[]));
        return this.post(from, { type: 'wf-got', tasks: m.tasks.map((s) => s.task) });
      case 'wf-steal': {
        // Half of what is READY here (at least what was asked): a thief that got one task would be back a task later.
        const room = this.peerCapacity.get(from);
        const fitsThief = (t: number) => {
          const need = this.opts.needs?.(t);
          return need === undefined || (room !== undefined && fits(need, room));
        };
        const stolen = this.worker.steal(from, Math.min(MAX_STOLEN, Math.max(m.want, Math.floor(this.worker.readyCount / 2))), this.opts.slots, fitsThief);
        this.stats.steals += stolen.length;
        // Until the thief says it has them, they count as held here (a reconcile must not dispatch them again).
        for (const s of stolen) {
          this.arrivedAt.delete(s.task);
          this.given.set(s.task, from);
          if (this.recreating.delete(s.task)) s.recreate = true;
          // Failed attempts go with the task: its retries stay counted, and avoid the members it failed on.
          const failedOn = this.failedOn.get(s.task);
          if (failedOn) {
            s.attempts = this.attempts.get(s.task) ?? 0;
            s.failedOn = failedOn;
            this.attempts.delete(s.task);
            this.failedOn.delete(s.task);
          }
        }
        return this.post(from, { type: 'wf-stolen', tasks: stolen });
      }
      case 'wf-stolen':
        this.stealOut = false;
        this.stealBackoff = m.tasks.length === 0;
        this.stats.stolenIn += m.tasks.length;
        for (const s of m.tasks) this.took(s);
        this.arrived(m.tasks.map((s) => s.task));
        this.queryAll(this.worker.adopt(m.tasks as StolenTask[]));
        if (m.tasks.length > 0) this.post(from, { type: 'wf-got', tasks: m.tasks.map((s) => s.task) });
        return;
      case 'wf-got':
        for (const t of m.tasks) this.given.delete(t);
        return;
    }
  }

  private adoptView(view: View): void {
    if (this.view && view.epoch <= this.view.epoch) return;
    const gone = (this.view?.members ?? []).filter((m) => !view.members.includes(m));
    this.view = view;
    this.acceptFrom = Math.max(this.acceptFrom, view.epoch);
    const roles = unitRoles(view.members, this.opts.units);
    this.ring = new Rendezvous(roles.shards);
    this.dispatchRing = new Rendezvous(roles.dispatchers);
    this.fileOwners = [];
    this.partitionOwners = [];
    if (view.leader !== this.self) this.leaderCounts = undefined;
    for (const node of gone) {
      this.shard.nodeLeft(node);
      this.peerCapacity.delete(node);
      this.queryAll(this.worker.nodeLeft(node));
    }
    if (this.opts.capacity) {
      for (const m of view.members) if (m !== this.self) this.post(m, { type: 'wf-capacity', ...this.opts.capacity });
    }
    // Entries of the location service that belong to another shard now move there; holders and
    // waiters announce themselves again (both are idempotent), which rebuilds what a dead shard held.
    const moved = this.shard.handOff((f) => this.flsOwner(f) === this.self);
    for (const e of moved) {
      const owner = this.flsOwner(e.file);
      if (e.location) this.batch(owner, 'wf-update', [e.file, e.location]);
    }
    for (const [f, location] of this.worker.held()) this.batch(this.flsOwner(f), 'wf-update', [f, location]);
    for (const f of this.worker.awaited()) this.batch(this.flsOwner(f), 'wf-query', f);
    const { ask } = this.dispatcher.newView(view, this.dispatchRing);
    for (const m of ask) this.post(m, { type: 'wf-held?', epoch: view.epoch });
  }

  private reconcile(): void {
    const r: Reconciled = this.dispatcher.reconcile(this.io.readJournal());
    const epoch = this.view!.epoch;
    for (const [worker, tasks] of r.assign) this.post(worker, { type: 'wf-assign', epoch, tasks });
    for (const [worker, tasks] of r.recreate) this.post(worker, { type: 'wf-assign', epoch, tasks, recreate: true });
    this.stats.dispatched = this.dispatcher.dispatched;
    this.post(this.view!.leader, { type: 'wf-count', epoch, partitions: r.counts });
  }

  private doneHere(from: string, tasks: number[]): void {
    const changed = new Set<number>();
    for (const t of tasks) {
      const p = this.dispatcher.partitionOf(t);
      if (!this.dispatcher.owns(p)) {
        const owner = this.partitionOwner(p);
        if (owner !== this.self && owner !== from) this.batch(owner, 'wf-done', t);
        continue;
      }
      if (this.dispatcher.markDone(t, from)) changed.add(p);
    }
    for (const p of changed) this.countsChanged.add(p);
  }

  private checkFinished(): void {
    if (this.finished || !this.leaderCounts) return;
    let total = 0;
    for (const n of this.leaderCounts) total += n;
    this.stats.finished = total;
    if (total === this.workflow.tasks.length) {
      this.finished = true;
      this.io.finish({ ok: true });
    }
  }

  /** The task ran; its outputs are at these locations (final outputs are in the shared directory and need none; markers are added here). */
  taskFinished(task: number, outputs: [number, FileLocation][]): void {
    this.release(task);
    this.worker.finished(task);
    const markers = this.workflow.tasks[task]!.outputs.filter((f) => this.workflow.files[f]!.marker);
    for (const [f, location] of [...outputs, ...markers.map((f): [number, FileLocation] => [f, { node: MARKER_NODE }])]) {
      this.worker.holds(f, location);
      this.batch(this.flsOwner(f), 'wf-update', [f, location]);
    }
    // A recreation is journaled and reported too (its dispatcher learns where the files are now) but counts nothing.
    const recreated = this.recreating.delete(task);
    if (recreated) this.stats.recreated++;
    else this.stats.completed++;
    (recreated ? this.journalRecreated : this.journalDone).push([task, this.self]);
    this.batch(this.partitionOwner(this.dispatcher.partitionOf(task)), 'wf-done', task);
    this.flush();
  }

  /**
   * An attempt failed. The retry goes to another member it has not failed on (one it fits), if there is
   * one, else it runs here again; after `maxAttempts` the workflow fails naming the members and the last error.
   */
  taskFailed(task: number, error: string): void {
    this.release(task);
    const attempts = (this.attempts.get(task) ?? 0) + 1;
    this.attempts.set(task, attempts);
    const on = [...(this.failedOn.get(task) ?? []), this.self];
    this.failedOn.set(task, on);
    this.worker.finished(task);
    if (attempts < this.opts.maxAttempts) {
      this.stats.retries++;
      const elsewhere = this.capablePeers(task).filter((p) => !on.includes(p));
      if (elsewhere.length > 0) this.push(task, elsewhere[Math.floor(this.io.random() * elsewhere.length)]!, this.worker.describe(task));
      else this.queryAll(this.worker.assign(task));
    } else this.post(this.view!.leader, { type: 'wf-failed', task, error: `failed ${attempts} times (on ${on.join(', ')}): ${error}` });
    this.flush();
  }

  /** A task handed over by another member (stolen or pushed): what it carries of its past. */
  private took(s: StolenTask): void {
    if (s.recreate) this.recreating.add(s.task);
    if (s.attempts !== undefined && s.attempts > 0) this.attempts.set(s.task, s.attempts);
    if (s.failedOn !== undefined && s.failedOn.length > 0) this.failedOn.set(s.task, s.failedOn);
  }

  /** Gives a task this member will not run to another member (kept as given here until it confirms). */
  private push(task: number, to: string, described: StolenTask): void {
    this.arrivedAt.delete(task);
    this.given.set(task, to);
    const recreate = this.recreating.delete(task);
    const moved: StolenTask = { ...described, ...(recreate ? { recreate } : {}), attempts: this.attempts.get(task) ?? 0, failedOn: this.failedOn.get(task) ?? [] };
    this.attempts.delete(task);
    this.failedOn.delete(task);
    this.post(to, { type: 'wf-push', tasks: [moved] });
  }

  /** Other members of the view a task fits (every member, for a task that says nothing of what it needs). */
  private capablePeers(task: number): string[] {
    const need = this.opts.needs?.(task);
    const peers = this.view?.members.filter((m) => m !== this.self) ?? [];
    return need === undefined ? peers : peers.filter((p) => {
      const room = this.peerCapacity.get(p);
      return room !== undefined && fits(need, room);
    });
  }

  private release(task: number): void {
    const need = this.claimed.get(task);
    if (!need) return;
    this.claimed.delete(task);
    this.used.cores -= need.cores;
    this.used.memoryMb -= need.memoryMb;
  }

  /**
   * A task too big for this member: to a member it fits, or parked until one is known; when every
   * member has said what it offers and none is big enough, the workflow fails naming the task.
   */
  private tooBig(task: number, need: Capacity): void {
    const peers = this.view?.members.filter((m) => m !== this.self) ?? [];
    const capable = this.capablePeers(task);
    const described = this.worker.remove(task) ?? this.worker.describe(task);
    this.parked.delete(task);
    if (capable.length > 0) return this.push(task, capable[Math.floor(this.io.random() * capable.length)]!, described);
    if (this.view && peers.every((p) => this.peerCapacity.has(p))) {
      const offers = [[this.self, this.opts.capacity!] as const, ...peers.map((p) => [p, this.peerCapacity.get(p)!] as const)].map(([m, c]) => `${m}: ${c.cores} cores, ${c.memoryMb} MiB`).join('; ');
      this.post(this.view.leader, { type: 'wf-failed', task, error: `needs ${need.cores} ${need.cores === 1 ? 'core' : 'cores'} and ${need.memoryMb} MiB, more than any member offers (${offers})` });
      return;
    }
    this.parked.add(task);
  }

  /** Parked tasks go where they fit, now that more is known. */
  private unpark(): void {
    for (const t of [...this.parked]) this.tooBig(t, this.opts.needs!(t)!);
  }

  /** An input could not be fetched (its holder left, or no longer has it): ask where it is again, and wait for it. */
  inputLost(task: number, file?: number): void {
    this.release(task);
    if (file !== undefined) this.queryAll(this.worker.forget(file));
    this.queryAll(this.worker.requeue(task));
    this.flush();
  }

  /**
   * Tasks were added to the workflow from task `from` on (workflow-growth.ts, applied by every member in
   * the same order): the dispatcher counts them, and those of partitions this member owns are dispatched.
   * Files in `shared` (final outputs of tasks done before this run, now read by an added task) are in the shared directory.
   */
  grew(from: number, shared: number[] = []): void {
    this.dispatcher.grow(this.workflow.tasks.length);
    for (const f of shared) this.saved.add(f);
    if (this.view) {
      const epoch = this.view.epoch;
      for (const [worker, tasks] of this.dispatcher.dispatchAdded(from)) this.post(worker, { type: 'wf-assign', epoch, tasks });
      this.stats.dispatched = this.dispatcher.dispatched;
    }
    this.flush();
  }

  /** Periodic: start READY tasks on free slots; when idle, ask a random peer for work. */
  tick(): void {
    this.stealBackoff = false;
    this.countsDue = true;
    this.flush();
  }

  /** Start no more tasks (the running ones finish): the workflow is being stopped. */
  pause(): void {
    this.paused = true;
  }

  get idle(): boolean {
    return this.worker.running.size === 0;
  }

  private pump(): void {
    if (this.paused) return;
    let work: number | undefined;
    for (;;) {
      if (this.worker.running.size >= this.opts.slots) {
        if (!this.short || this.worker.running.size >= this.short.max) break;
        work ??= this.shortWork();
        if (work >= this.short.budget) break;
      }
      const next = this.worker.peek();
      if (next === undefined) break;
      const need = this.opts.needs?.(next);
      if (need) {
        if (!fits(need, this.opts.capacity ?? { cores: 0, memoryMb: 0 })) {
          this.tooBig(next, need);
          continue;
        }
        // First READY, first run: a task waiting for cores to free keeps the ones behind it waiting too.
        if (!fits(need, { cores: this.opts.capacity!.cores - this.used.cores, memoryMb: this.opts.capacity!.memoryMb - this.used.memoryMb })) break;
      }
      const t = this.worker.take()!;
      if (need) {
        this.claimed.set(t, need);
        this.used.cores += need.cores;
        this.used.memoryMb += need.memoryMb;
      }
      if (work !== undefined) work += this.short!.seconds(t);
      const inputs = this.workflow.tasks[t]!.inputs.map((f): [number, FileLocation | 'shared'] => {
        const state = this.worker.fileState(f);
        return [f, state === 'SHARED' ? 'shared' : this.worker.location(f)!];
      });
      this.io.run(t, inputs, this.recreating.has(t), (this.attempts.get(t) ?? 0) + 1);
    }
    const peers = this.view?.members.filter((m) => m !== this.self) ?? [];
    if (this.opts.stealing && !this.stealOut && !this.stealBackoff && peers.length > 0 && this.worker.running.size < this.opts.slots && this.worker.readyCount === 0) {
      this.stealOut = true;
      this.post(peers[Math.floor(this.io.random() * peers.length)]!, { type: 'wf-steal', want: this.opts.slots });
    }
  }

  /**
   * A task starts running now: how long it waited here since it arrived (assigned or stolen in), for its
   * inputs and a free thread (ms; undefined without a clock or if it did not arrive here). Asked once per start.
   */
  waited(task: number): number | undefined {
    const at = this.arrivedAt.get(task);
    if (at === undefined) return undefined;
    this.arrivedAt.delete(task);
    return this.io.now!() - at;
  }

  /** Tasks arrive here (the first arrival counts: a task given again while it waits keeps its time). */
  private arrived(tasks: readonly number[]): void {
    const now = this.io.now?.();
    if (now === undefined) return;
    for (const t of tasks) if (!this.arrivedAt.has(t)) this.arrivedAt.set(t, now);
  }

  /** Known work (seconds) of the tasks taken (short-task budget). */
  private shortWork(): number {
    let work = 0;
    for (const t of this.worker.running) work += this.short!.seconds(t);
    return work;
  }

  /** A peer left: tasks it had not confirmed stealing come back; a steal it did not answer is forgotten. */
  peerGone(node: string): void {
    const lost = [...this.given].filter(([, thief]) => thief === node).map(([t]) => t);
    if (lost.length > 0) {
      const done = this.io.readJournal().done;
      for (const t of lost) {
        this.given.delete(t);
        if (!done.has(t)) this.queryAll(this.worker.assign(t));
      }
    }
    if (this.dispatcher.forget(node)) this.reconcile();
    // This shard answers no query with a file only it held any more (the next view repeats this, harmlessly). The
    // worker's own copies of such locations stay until that view (its queries then go to the new shards): a task
    // that tries one meanwhile finds the holder gone and waits for the file again (inputLost).
    this.shard.nodeLeft(node);
    this.latency.peerGone(node);
    this.stealOut = false;
    this.flush();
  }

  /** The shard of a file under the current view (hashed once per file and view). */
  private flsOwner(file: number): string {
    return (this.fileOwners[file] ??= this.ring!.ownerOf(this.workflow.files[file]!.key));
  }

  private partitionOwner(partition: number): string {
    return (this.partitionOwners[partition] ??= Dispatcher.ownerOf(partition, this.view!, this.opts.mode, this.dispatchRing!));
  }

  private queryAll(files: number[]): void {
    if (!this.ring) return;
    for (const f of files) {
      this.latency.asking(f);
      this.batch(this.flsOwner(f), 'wf-query', f);
    }
  }

  private batch(to: string, type: Batch, item: unknown): void {
    let byType = this.outbox.get(to);
    if (!byType) this.outbox.set(to, (byType = new Map()));
    let list = byType.get(type);
    if (!list) byType.set(type, (list = []));
    list.push(item);
  }

  /** Sends (or, to this member, queues) a message, in pieces of at most MESSAGE_ITEMS tasks or files. */
  private post(to: string, m: WorkflowMessage): void {
    for (const piece of sliceMessage(m)) {
      if (to === this.self) this.inbox.push([to, piece]);
      else this.io.send(to, piece as unknown as LayerBody);
    }
  }

  /** The next message to handle, if any. */
  private nextMessage(): [string, WorkflowMessage] | undefined {
    if (this.inboxHead >= this.inbox.length) return undefined;
    const next = this.inbox[this.inboxHead]!;
    this.inbox[this.inboxHead++] = undefined as never;
    if (this.inboxHead === this.inbox.length) {
      this.inbox = [];
      this.inboxHead = 0;
    } else if (this.inboxHead >= 1024 && this.inboxHead * 2 >= this.inbox.length) {
      this.inbox = this.inbox.slice(this.inboxHead);
      this.inboxHead = 0;
    }
    return next;
  }

  private flush(): void {
    if (!this.io.defer) return this.flushNow();
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.io.defer(() => {
      this.flushScheduled = false;
      this.flushNow();
    });
  }

  /** Journals the completions, then sends the batches filled and the done counts due. */
  private sendBatches(): void {
    if (this.journalDone.length > 0 || this.journalRecreated.length > 0) {
      if (this.journalDone.length > 0) this.io.journal(this.journalDone, false);
      if (this.journalRecreated.length > 0) this.io.journal(this.journalRecreated, true);
      this.journalDone = [];
      this.journalRecreated = [];
    }
    for (const [to, byType] of this.outbox) {
      this.outbox.delete(to);
      for (const [type, items] of byType) {
        const key = type === 'wf-done' ? 'tasks' : 'files';
        if (type === 'wf-query') this.stats.queries += items.length;
        if (type === 'wf-update') this.stats.updates += items.length;
        if (type === 'wf-notify') this.post(to, { type: 'wf-located', files: items as [number, FileLocation][], waited: true });
        else this.post(to, { type, [key]: items, ...this.latency.probe(to, type) } as unknown as WorkflowMessage);
      }
    }
    if (this.countsChanged.size > 0 && this.view && (this.countsDue || [...this.countsChanged].some((p) => this.dispatcher.partitionDone(p)))) {
      this.post(this.view.leader, { type: 'wf-count', epoch: this.view.epoch, partitions: [...this.countsChanged].map((p) => [p, this.dispatcher.countFor(p)]) });
      this.countsChanged.clear();
      this.countsDue = false;
    }
  }

  /**
   * Handles the messages received (from peers and itself) and starts what became READY, sending the
   * batches as they fill; until nothing is left, or — on a node — until this turn's TURN_ITEMS tasks and
   * files are handled: then what became READY starts, and the rest waits for the next turn.
   */
  private flushNow(): void {
    if (this.flushing) return;
    this.flushing = true;
    let budget = this.turnItems;
    try {
      for (;;) {
        this.sendBatches();
        if (budget > 0) {
          const next = this.nextMessage();
          if (next) {
            budget -= itemsOf(next[1]);
            this.handle(next[0], next[1]);
            continue;
          }
        }
        this.pump();
        this.sendBatches();
        if (this.inboxHead >= this.inbox.length) break;
        if (budget <= 0) {
          this.flush(); // the rest on the next turn
          break;
        }
      }
    } finally {
      this.flushing = false;
    }
    this.stats.ready = this.worker.readyCount;
    this.stats.waiting = this.worker.waitingCount;
    this.stats.running = this.worker.running.size;
  }
}
