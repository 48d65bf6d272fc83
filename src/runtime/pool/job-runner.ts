import type { RuntimeMessage } from './pool-messages.js';
import { StealPlanner } from './steal-planner.js';
import type { TaskSnapshot } from './task-snapshot.js';
import type { RunRequest } from '../worker/messages.js';
import type { WorkerEvent } from '../worker/worker-pool.js';
import { TaskTransfers } from './task-transfers.js';
import { JobRunnerRecords, type JobRunnerDeps, type RunnerEvent } from './job-runner-records.js';
import { PoolTask, RUN_ENDS, type PoolTaskState } from './pool-tasks.js';

export type { JobRunnerDeps, RunnerEvent };


/** Tasks shorter than this on average (ms) are pipelined: a worker gets its next one before it finishes. */
const PIPELINE_BELOW_MS = 2;
/** Short tasks go to a worker in batches of up to this many (one message), about BATCH_MS of work each. */
const MAX_BATCH = 128;
const BATCH_MS = 1;
/**
 * Spawn reports (batches of spawned children, or a child split off) a worker may have unrecorded here at once
 * (RunRequest.spawnWindow): it waits for room before it sends another. Each report is a ledger group, so a
 * window fills about half a ledger transaction (Ledger's maxBatch: 64 groups), and bounds what one turn of
 * this thread's event loop takes in from a slot: a million spawns are recorded a window at a time.
 */
const SPAWN_WINDOW = 32;

interface PendingSteal {
  thief: string;
  requestId: number;
  deadline: number;
}

/** The states in which a task is on one of the node's workers. */
const ON_WORKER: PoolTaskState[] = ['running', 'early', 'abandoned'];
/** The states from which a task may still come back to this node's pool or workers (the node does not ask for work meanwhile). */
const COMING: PoolTaskState[] = ['pooled', 'running', 'early', 'abandoned', 'recording', 'migrating', 'claiming'];
/** Everything but pooled: what a draining node waits for before it is drained. */
const UNSETTLED: PoolTaskState[] = ['running', 'early', 'abandoned', 'offered', 'claiming', 'recording', 'migrating', 'completing'];

/**
 * One node's part in one job: its local task pool, its running tasks, the thief and victim sides
 * of work stealing, potential splitting, and the migration of its tasks when it drains.
 * Every task it holds is owned in the ledger; ownership moves only through a claim there, so
 * a task counts on exactly one node whatever messages are lost (a task offered here may start before
 * its claim settles, but what it does is held until then, and dropped if the claim is refused).
 * Each task's state is a PoolTask's in one table (pool-tasks.ts), moved only by its legal transitions.
 */
export class JobRunner extends JobRunnerRecords {
  private readonly pendingSteals: PendingSteal[] = [];
  protected readonly transfers: TaskTransfers;
  private readonly planner: StealPlanner;
  private draining = false;
  private handOver = true;
  private cancelTimer: (() => void) | undefined;
  private timerAt = 0;
  private drainWaiters: Array<() => void> = [];
  private migrateCursor = 0;
  /** The input as workers get it: 'loading' until `loadInput` resolved (`d.input` when there is no loader). */
  private input: { value: unknown } | 'loading' | undefined;

  constructor(d: JobRunnerDeps) {
    super(d);
    this.planner = new StealPlanner(d.rng, d.steal);
    this.transfers = new TaskTransfers({
      nodeId: d.nodeId, jobId: d.jobId, ledger: d.ledger, clock: this.clock, offerTimeoutMs: d.offerTimeoutMs ?? 5_000,
      tasks: this.tasks,
      send: (to, m) => d.send(to, m),
      accepting: () => !this.stopped && !this.draining,
      overBudget: () => this.budgetRefuses(),
      place: (task, snapshot) => this.place(task, snapshot),
      startEarly: (task, snapshot) => this.startEarly(task, snapshot),
      claimSettled: (task, claimed) => this.claimSettled(task, claimed),
      schedule: () => this.schedule(),
      arm: (ms) => this.arm(ms),
      handedOver: (kind, to, taskId) => {
        if (kind === 'steal') this.stats.stealsOut++;
        else if (kind === 'migration') this.stats.migrationsOut++;
        else this.stats.placementsOut++;
        this.d.onEvent({ type: kind, from: this.d.nodeId, to, taskId });
      },
      received: (kind) => void (kind === 'steal' ? this.stats.stealsIn++ : this.stats.migrationsIn++),
      stealAnswered: (requestId, claimed) => this.stealAnswered(requestId, claimed),
      log: this.log,
    });
    if (!d.loadInput) this.input = { value: d.input };
  }

  /** Tasks held here: queued, running, or being handed over. */
  get load(): { pooled: number; running: number; outgoing: number } {
    return { pooled: this.tasks.count('pooled'), running: this.onWorkers(), outgoing: this.tasks.count('offered') };
  }

  /** Checks the task table's invariants (pool-tasks.ts); throws naming the first that fails. The simulation tests run it after every step. */
  validate(): void {
    this.tasks.validate(this.d.workers.size);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get stealStats() {
    return this.planner.stats;
  }

  /**
   * A task this node now owns (claimed in the ledger; recovered from a node that left): run it or queue it.
   * One that would take the pool over its memory budget is handed on to another member (offered, as on
   * a drain; a refusal brings it back here); with no other member it stays here: never lost.
   */
  adopt(snapshot: TaskSnapshot): void {
    if (this.stopped) return;
    const held = this.tasks.get(snapshot.id);
    if (held) return this.log.child({ task: snapshot.id }).error('runtime', `adopted task ${snapshot.id}, which this node holds already (${held.state}): kept as it is`);
    const overBudget = this.budgetRefuses();
    const peers = overBudget && !this.draining ? this.d.peers() : [];
    if (overBudget && peers.length > 0) {
      const to = peers[this.migrateCursor++ % peers.length]!;
      this.log.child({ task: snapshot.id }).info('runtime', `recovered task ${snapshot.id} goes on to ${to}: ${overBudget}`);
      this.transfers.offer(new PoolTask(snapshot.id), snapshot, to, undefined, 'migration');
    } else {
      if (overBudget) this.log.child({ task: snapshot.id }).warn('runtime', `recovered task ${snapshot.id} stays here over budget (no other member to take it): ${overBudget}`);
      this.place(new PoolTask(snapshot.id), snapshot);
    }
    this.schedule();
  }

  /** Events from the worker pool about this job's tasks. */
  onWorker(ev: WorkerEvent): void {
    if (ev.type === 'ready') return;
    const task = this.tasks.get(ev.taskId);
    // A run started before its claim settled: its reports wait for the claim (claimSettled).
    if (task?.state === 'early') return void task.held!.push(ev);
    // A run that is not this node's any more: its reports are dropped, its end takes it off the table.
    if (task?.state === 'abandoned') {
      this.spawnReportSettled(ev);
      if (!RUN_ENDS.has(ev.type)) return;
      this.tasks.move(task, 'gone');
      return this.schedule();
    }
    if (ev.type === 'app') return this.d.onTaskMessage?.(ev.taskId, ev.body, ev.slot);
    if (ev.type === 'setVar') return this.d.setVar(ev.name, ev.value);
    if (task?.state !== 'running') {
      this.spawnReportSettled(ev);
      this.log.child({ task: ev.taskId }).debug('runtime', `dropped a ${ev.type} report of task ${ev.taskId}, which is ${task?.state ?? 'not'} held here`);
      // A run that ended frees its worker (a task of an earlier job on this node, say): what waits here may start on it.
      if (RUN_ENDS.has(ev.type)) this.schedule();
      return;
    }
    switch (ev.type) {
      case 'child': return this.onChild(task, ev.childState, ev.checkpoint, ev.on, ev.slot);
      case 'children': return this.onChildren(task, ev.states, ev.checkpoint, ev.slot);
      case 'encoded-children': return this.onChildren(task, ev.records, ev.checkpoint, ev.slot);
      case 'done': return this.onDone(task, ev.partial, ev);
      case 'migrated': return this.onMigrated(task, ev.state, ev.partial);
      case 'checkpoint': return this.onCheckpoint(task, ev.state, ev.partial);
      case 'cancelled':
        this.tasks.move(task, 'gone');
        return this.schedule();
      case 'failed': return this.onFailed(task, ev.error);
    }
  }

  /** Messages from other nodes of this job. */
  onMessage(from: string, m: RuntimeMessage): void {
    switch (m.type) {
      case 'steal': return this.onStealRequest(from, m.requestId);
      case 'steal-empty':
        this.stealAnswered(m.requestId, false);
        return this.schedule();
      case 'offer': return void this.transfers.receive(from, m.task, m.requestId);
      case 'offer-ack': return void this.transfers.onAck(from, m.taskId, m.claimed);
    }
  }

  /** Another member left the job: forget requests to it, take back tasks it never claimed. */
  peerLeft(nodeId: string): void {
    this.planner.memberLeft(nodeId, this.clock.now());
    for (let i = this.pendingSteals.length - 1; i >= 0; i--) if (this.pendingSteals[i]!.thief === nodeId) this.pendingSteals.splice(i, 1);
    this.transfers.peerLeft(nodeId);
    this.schedule();
  }

  peersJoined(): void {
    this.planner.membersJoined(this.clock.now());
    this.schedule();
  }

  /**
   * Graceful scale-in: stop answering steals, stop running tasks at their next shouldMigrate(),
   * hand every task to the remaining members, and resolve once nothing is left here. With no
   * member left to take them (or `handOver: false`, when every member is stopping), the tasks stay
   * in the ledger at their latest checkpoint, and whoever leads the job next recovers them.
   */
  drain(opts: { handOver?: boolean } = {}): Promise<void> {
    this.draining = true;
    this.handOver = opts.handOver ?? true;
    for (const p of this.pendingSteals.splice(0)) void this.sendSafe(p.thief, { type: 'steal-empty', job: this.d.jobId, requestId: p.requestId });
    for (const slot of this.tasks.busySlots()) this.d.workers.requestMigrate(slot);
    this.schedule();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      this.checkDrained();
    });
  }

  /** The job ended (or this node left it): cancel what runs, drop what is queued. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    for (const slot of this.tasks.busySlots()) this.d.workers.cancel(slot);
    while (this.tasks.count('pooled') > 0) this.tasks.takePooled(this.tasks.count('pooled') - 1, 'gone');
    this.pendingSteals.length = 0;
    this.checkDrained();
  }

  /** Nothing held, nothing under way: no task in the table. */
  get idle(): boolean {
    return this.tasks.size === 0;
  }

  // ---- scheduling --------------------------------------------------------------------

  /** Puts an owned task where it is wanted: an idle worker, a waiting thief, or the pool. */
  protected place(task: PoolTask, snapshot: TaskSnapshot): void {
    if (this.stopped) {
      if (task.state !== 'new') this.tasks.move(task, 'gone');
      return;
    }
    if (!this.draining) {
      const idle = this.inputReady() ? this.freeSlot() : undefined;
      if (idle !== undefined) return this.start(idle, task, snapshot);
      const thief = this.pendingSteals.shift();
      if (thief) return this.transfers.offer(task, snapshot, thief.thief, thief.requestId, 'steal');
    }
    task.snapshot = snapshot;
    this.tasks.move(task, 'pooled');
  }

  protected schedule(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    this.transfers.expire(now);
    if (this.draining) {
      this.migratePool();
      this.checkDrained();
      return;
    }
    // Local workers first (newest task: depth-first, good locality), thieves get the oldest.
    if (this.pooled() > 0 && this.inputReady()) {
      for (let slot = this.freeSlot(); slot !== undefined && this.pooled() > 0; slot = this.freeSlot()) this.dispatch(slot);
    }
    while (this.pendingSteals.length > 0 && this.pooled() > 0) {
      const p = this.pendingSteals.shift()!;
      this.offerToThief(p.thief, p.requestId);
    }
    this.expireSteals(now);
    this.pipeline();
    // Potential splitting: ask running tasks for as many new tasks as there are takers.
    let wanted = this.idleSlots().length + this.pendingSteals.length;
    if (wanted > 0) {
      for (const slot of this.tasks.busySlots()) {
        if (wanted <= 0) break;
        if (!this.d.workers.splitRequested(slot)) this.d.workers.requestSplit(slot);
        wanted--;
      }
    } else {
      // Withdraw split requests nobody needs any more (per slot: a slot may hold a batch of tasks).
      for (let slot = 0; slot < this.d.workers.size; slot++) if (this.d.workers.splitRequested(slot)) this.d.workers.clearSplit(slot);
    }
    this.steal(now);
  }

  /**
   * With short tasks a worker would spend much of its time waiting for this thread to hand it the
   * next one: give each busy worker its next task ahead (one at most), while nobody else wants work.
   */
  protected pipeline(): void {
    if (this.input === undefined || this.input === 'loading') return;
    if (this.draining || this.pendingSteals.length > 0 || this.pooled() === 0) return;
    if (this.averageTaskMs === undefined || this.averageTaskMs >= (this.d.pipelineBelowMs ?? PIPELINE_BELOW_MS)) return;
    for (const slot of this.d.workers.pipelineSlots?.() ?? []) {
      if (this.pooled() === 0) return;
      this.dispatch(slot);
    }
  }

  /**
   * Starts the newest pooled task on `slot`, or a batch of the newest ones when tasks are short (one
   * message for the batch): about BATCH_MS of work, and at most a 2·workers-th of the pool, so the rest
   * stays for the other workers and for thieves; never while a thief waits.
   */
  protected dispatch(slot: number): void {
    const size = this.batchSize();
    const pool = this.tasks.pooled;
    if (size <= 1) {
      const task = pool[pool.length - 1]!;
      return this.start(slot, task, task.snapshot!);
    }
    const batch = pool.slice(pool.length - size).reverse();
    const reqs = batch.map((task) => this.started(slot, task, task.snapshot!));
    this.d.workers.runBatch!(slot, reqs, (this.input as { value: unknown }).value);
  }

  protected batchSize(): number {
    const avg = this.averageTaskMs;
    if (!this.d.workers.runBatch || avg === undefined || avg >= (this.d.pipelineBelowMs ?? PIPELINE_BELOW_MS) || this.pendingSteals.length > 0 || this.draining) return 1;
    const fair = Math.floor(this.pooled() / (2 * this.d.workers.size));
    return Math.max(1, Math.min(MAX_BATCH, fair, Math.floor(BATCH_MS / Math.max(avg, 0.001))));
  }

  /** The thief side: an idle node asks a random peer for work. */
  protected steal(now: number): void {
    // A completion still being written brings no task back: the node asks for work meanwhile (a steal's round trip overlaps it).
    // A node whose pool memory budget has no room for one more task does not steal (the work stays where it is).
    const needWork = this.idleSlots().length > 0 && !this.tasks.any(...COMING) && this.budgetRefuses() === undefined;
    // Busy with nothing asked of anyone: the planner has nothing to do (spares a peer list per event).
    if (!needWork && !this.planner.asking) return;
    const peers = this.d.peers();
    const action = this.planner.next(now, needWork, this.d.victims ? this.d.victims(peers) : peers);
    if (action.kind === 'send') {
      this.d.send(action.victim, { type: 'steal', job: this.d.jobId, requestId: action.requestId }).catch(() => {
        this.planner.undeliverable(action.requestId, this.clock.now());
        this.schedule();
      });
      this.arm(this.planner.requestTimeoutMs);
    } else if (action.kind === 'wait') {
      this.arm(action.ms);
    }
  }

  /** The answer to a steal request of this node: the planner learns it, the histogram how long it took. */
  private stealAnswered(requestId: number, claimed: boolean): void {
    const ms = this.planner.answered(requestId, claimed, this.clock.now());
    if (ms !== undefined) this.d.histograms?.stealLatency.observe(ms / 1000, { outcome: claimed ? 'task' : 'empty' });
  }

  protected onStealRequest(thief: string, requestId: number): void {
    if (this.stopped || this.draining) return void this.sendSafe(thief, { type: 'steal-empty', job: this.d.jobId, requestId });
    if (this.pooled() > 0) return this.offerToThief(thief, requestId);
    if (this.onWorkers() === 0) return void this.sendSafe(thief, { type: 'steal-empty', job: this.d.jobId, requestId });
    this.pendingSteals.push({ thief, requestId, deadline: this.clock.now() + (this.d.stealWaitMs ?? 25) });
    this.schedule();
  }

  protected expireSteals(now: number): void {
    let next = Infinity;
    for (let i = this.pendingSteals.length - 1; i >= 0; i--) {
      const p = this.pendingSteals[i]!;
      if (p.deadline <= now) {
        this.pendingSteals.splice(i, 1);
        void this.sendSafe(p.thief, { type: 'steal-empty', job: this.d.jobId, requestId: p.requestId });
      } else {
        next = Math.min(next, p.deadline - now);
      }
    }
    if (next !== Infinity) this.arm(next);
  }

  // ---- transfers (steal answers and migrations) --------------------------------------

  /**
   * Placement: offers a task of this node's pool to a chosen node (the claim in the ledger decides;
   * if that node refuses or is unreachable the task comes back here). Returns false if the task is not pooled here.
   */
  placeOn(taskId: string, node: string): boolean {
    const task = this.tasks.get(taskId);
    if (task?.state !== 'pooled' || this.stopped || node === this.d.nodeId) return false;
    this.transfers.offer(task, task.snapshot!, node, undefined, 'placement');
    return true;
  }

  /** The ids of the tasks waiting in this node's pool (oldest first). */
  pooledTasks(): string[] {
    return this.tasks.pooled.map((t) => t.id);
  }

  /** Offers a pooled task to a thief: the oldest, or the one `forThief` picks. */
  protected offerToThief(thief: string, requestId: number): void {
    const pool = this.tasks.pooled;
    const at = this.d.forThief ? this.d.forThief(pool.map((t) => t.snapshot!), thief) : 0;
    const task = pool[Number.isInteger(at) && at >= 0 && at < pool.length ? at : 0]!;
    this.transfers.offer(task, task.snapshot!, thief, requestId, 'steal');
  }

  protected migratePool(): void {
    if (!this.handOver) return;
    const peers = this.d.peers();
    if (peers.length === 0) return; // nobody to hand over to yet: wait for a member
    while (this.pooled() > 0) {
      const task = this.tasks.pooled[0]!;
      const to = peers[this.migrateCursor++ % peers.length]!;
      this.transfers.offer(task, task.snapshot!, to, undefined, 'migration');
    }
  }

  protected checkDrained(): void {
    if (!this.draining && !this.stopped) return;
    if (!this.stopped) {
      if (this.tasks.any(...UNSETTLED)) return;
      if (this.pooled() > 0 && this.handOver && this.d.peers().length > 0) return;
    }
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  // ---- helpers -----------------------------------------------------------------------

  /** Whether tasks can start (the input is here); the first call starts obtaining it. */
  protected inputReady(): boolean {
    if (this.input !== undefined) return this.input !== 'loading';
    this.input = 'loading';
    this.d.loadInput!().then((value) => {
      this.input = { value };
      this.schedule();
    }, (err: unknown) => {
      if (!this.stopped) this.d.onEvent({ type: 'failed', error: `the job input could not be obtained on node ${this.d.nodeId}: ${err instanceof Error ? err.message : String(err)}` });
    });
    return false;
  }

  protected start(slot: number, task: PoolTask, snapshot: TaskSnapshot): void {
    this.d.workers.run(slot, this.started(slot, task, snapshot), (this.input as { value: unknown }).value);
  }

  /**
   * An offered task starts on an idle worker before its claim settles, in state `early`: what its run
   * reports is held until the claim is known (a bound proposed by a run that does not count could
   * otherwise keep the run that does from recording the solution behind it); false if no worker is idle.
   */
  private startEarly(task: PoolTask, snapshot: TaskSnapshot): boolean {
    if (this.stopped || this.draining || !this.inputReady()) return false;
    const slot = this.freeSlot();
    if (slot === undefined) return false;
    this.d.workers.run(slot, this.started(slot, task, snapshot, 'early'), (this.input as { value: unknown }).value);
    return true;
  }

  /** Claimed: the run's held reports are handled now, in order. Refused: the run is stopped and nothing it did counts. */
  private claimSettled(task: PoolTask, claimed: boolean): void {
    const held = task.held ?? [];
    if (this.stopped || !claimed) for (const ev of held) this.spawnReportSettled(ev);
    if (this.stopped) return this.tasks.move(task, 'gone');
    if (claimed) {
      this.tasks.move(task, 'running');
      for (const ev of held) this.onWorker(ev);
      return;
    }
    this.log.child({ task: task.id }).info('runtime', `task ${task.id} started before its claim, which was refused: its run is dropped`);
    if (held.some((ev) => RUN_ENDS.has(ev.type))) return this.tasks.move(task, 'gone');
    this.tasks.move(task, 'abandoned');
    this.stopRun(task);
  }

  /** Marks a task as on worker `slot` (running, or early: before its claim settled); its run request. */
  protected started(slot: number, task: PoolTask, snapshot: TaskSnapshot, as: 'running' | 'early' = 'running'): RunRequest {
    this.tasks.move(task, as);
    task.slot = slot;
    if (as === 'early') task.held = [];
    if (this.keepsLatest) task.latest = { state: snapshot.state, partial: snapshot.partial };
    task.startedAt = this.clock.now();
    this.stats.tasksRun++;
    // A child still encoded goes to its worker as its record (its state is decoded there, not here).
    const encoded = snapshot.encoded;
    return {
      taskId: snapshot.id, jobId: this.d.jobId, ref: this.d.ref, state: encoded ? undefined : snapshot.state, partial: snapshot.partial,
      board: this.d.board, varNames: this.d.varNames, owner: this.d.nodeId, spawnWindow: this.d.spawnWindow ?? SPAWN_WINDOW, ...(encoded ? { encoded } : {}),
    };
  }

  private pooled(): number {
    return this.tasks.count('pooled');
  }

  private onWorkers(): number {
    let n = 0;
    for (const s of ON_WORKER) n += this.tasks.count(s);
    return n;
  }

  private idleSlots(): number[] {
    return this.d.workers.idleSlots();
  }

  private freeSlot(): number | undefined {
    return this.idleSlots()[0];
  }

  /** Wakes the scheduler after `ms` (the earliest of all pending wake-ups wins). */
  private arm(ms: number): void {
    const at = this.clock.now() + Math.max(1, Math.ceil(ms));
    if (this.cancelTimer && this.timerAt <= at) return;
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = undefined;
      this.schedule();
    }, at - this.clock.now());
  }

  private async sendSafe(to: string, message: RuntimeMessage): Promise<void> {
    try {
      await this.d.send(to, message);
    } catch (err) {
      this.log.debug('runtime', `could not send ${message.type} to ${to}`, err);
    }
  }
}
