import { log as rootLog, type Log } from '../../util/log.js';
import type { Rng } from '../../util/rng.js';
import { LostOwnership, type Ledger } from './ledger.js';
import type { RuntimeMessage } from './pool-messages.js';
import type { StealPlannerOptions } from './steal-planner.js';
import type { TaskRef } from '../worker/task.js';
import { encodedSnapshots, TaskIds, type TaskSnapshot } from './task-snapshot.js';
import { PoolBudget } from './pool-budget.js';
import { PoolTasks, type PoolTask, type PoolTaskState } from './pool-tasks.js';
import type { EncodedRecords } from '../worker/task-record.js';
import type { InlineRuns } from '../worker/messages.js';
import type { Workers } from '../worker/worker-pool.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { TaskTransfers } from './task-transfers.js';
import { failedContribution } from './contributions.js';
import type { TaskPoolHistograms } from './task-pool-histograms.js';
import type { KindEvent } from '../kinds/job-kind.js';
// The pool's events, declared in the seam's KindEvents.
import './pool-events.js';

const firstLine = (s: string) => s.split('\n', 1)[0]!;


/** The reports a worker counts against its spawn window (RunRequest.spawnWindow): each is acknowledged once, recorded or dropped. */
const SPAWN_REPORTS: ReadonlySet<string> = new Set(['child', 'children', 'encoded-children']);

/** What a runner tells its kind: what it reports on the node (pool-events.ts), or that the job failed. */
export type RunnerEvent = KindEvent | { type: 'failed'; error: string };

export interface JobRunnerDeps {
  nodeId: string;
  jobId: string;
  ref: TaskRef;
  /** The job's shared input (shipped once per worker). */
  input?: unknown;
  /**
   * Or how to obtain it, called once when the first task is about to run here (a large input comes
   * from the data plane); tasks wait in the pool meanwhile. A failure fails the job.
   */
  loadInput?: () => Promise<unknown>;
  ledger: Ledger;
  workers: Workers;
  /** The job's variable board (shared with workers), if its task type declares vars. */
  board: SharedArrayBuffer | undefined;
  varNames: string[];
  /** Sends a runtime message to another node of the job. */
  send(to: string, message: RuntimeMessage): Promise<void>;
  /** The other live members of the job. */
  peers(): string[];
  setVar(name: string, value: unknown): void;
  onEvent(event: RunnerEvent): void;
  rng: Rng;
  steal?: StealPlannerOptions;
  /** How long a steal request may wait for a running task to split (ms). */
  stealWaitMs?: number;
  /** How long an offered task waits for the receiver's answer before it is taken back (ms). */
  offerTimeoutMs?: number;
  /** Pipeline tasks to busy workers while tasks take less than this on average (ms; default 2). */
  pipelineBelowMs?: number;
  clock?: Clock;
  /** Times a failed task is run again from its latest checkpoint (default 0). */
  retries?: number;
  /** Spawn reports a worker may have unrecorded at once (RunRequest.spawnWindow; default: job-runner.ts's SPAWN_WINDOW). */
  spawnWindow?: number;
  /** The job's memory budget for the tasks this node holds (bytes; pool-budget.ts); none by default. */
  poolMemoryBytes?: number;
  /** A task that still fails completes with no contribution and is listed in the outcome instead of failing the job. */
  collectFailures?: boolean;
  /** Locality: which pooled task a thief gets (index into the pool, oldest first; default 0). */
  forThief?(pool: readonly TaskSnapshot[], thief: string): number;
  /** Locality: the peers this node may steal from, best first (default: all, chosen at random). */
  victims?(peers: readonly string[]): string[];
  /** An application message from a running task (TaskContext.send) for the job kind's code. */
  onTaskMessage?(taskId: string, body: unknown, slot: number): void;
  /** Where task run times and steal latencies are recorded (default: nowhere). */
  histograms?: TaskPoolHistograms;
  /** Logging with the job's and node's ids (default: the process's). */
  log?: Log;
  /** Told of every move of a task between the states of pool-tasks.ts (tests count them). */
  onTransition?(taskId: string, from: PoolTaskState | 'new', to: PoolTaskState | 'gone'): void;
}

/**
 * The half of a job runner that turns its workers' reports into ledger writes: children split off or
 * spawned (recorded with their parent's checkpoint or completion), completions (gathered into one group
 * per turn), checkpoints, migrations and failures; a write that lost its task's ownership drops the task.
 * Every task's state is its PoolTask's (pool-tasks.ts); the scheduling half (JobRunner) decides where
 * the recorded tasks go.
 */
export abstract class JobRunnerRecords {
  /** `workerMs`: time this node's workers spent running tasks that completed here, as they measured it. */
  readonly stats = { workerMs: 0, tasksRun: 0, tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsOut: 0, migrationsIn: 0, placementsOut: 0, checkpoints: 0, retries: 0, failedTasks: 0 };
  /** Every task this node holds or is about to hold, each in one state. */
  protected readonly tasks: PoolTasks;
  /** Only a task type with retries needs a running task's latest durable state (most jobs pay nothing for it). */
  protected get keepsLatest(): boolean {
    return (this.d.retries ?? 0) > 0;
  }
  /** The moving average of how long tasks take (ms). */
  protected averageTaskMs: number | undefined;
  protected readonly ids: TaskIds;
  /** Completions (without children) reported in this turn of the event loop: written as one ledger group at its end. */
  protected completions: Array<{ task: PoolTask; partial: unknown; inline?: InlineRuns | undefined; took?: number | undefined }> = [];
  protected stopped = false;
  protected readonly clock: Clock;
  protected abstract readonly transfers: TaskTransfers;
  protected readonly log: Log;
  private readonly budget: PoolBudget | undefined;
  /** Whether new tasks were refused for the budget (the job is failing: nothing more is recorded). */
  private overBudget = false;

  constructor(protected readonly d: JobRunnerDeps) {
    this.tasks = new PoolTasks(d.onTransition);
    this.budget = d.poolMemoryBytes !== undefined ? new PoolBudget(d.poolMemoryBytes, d.jobId, d.nodeId) : undefined;
    this.ids = new TaskIds(d.nodeId);
    this.clock = d.clock ?? systemClock;
    this.log = d.log ?? rootLog.child({ job: d.jobId, node: d.nodeId });
  }

  /** Puts a task this node owns (new, or recorded, claimed or checkpointed just now) where it is wanted: an idle worker, a waiting thief, or the pool. */
  protected abstract place(task: PoolTask, snapshot: TaskSnapshot): void;
  protected abstract schedule(): void;

  // ---- worker events -----------------------------------------------------------------

  /** A spawn report (see RunRequest.spawnWindow) was recorded, or dropped: its worker may send another. */
  protected spawnReportSettled(ev: { type: string; slot: number }): void {
    if (SPAWN_REPORTS.has(ev.type)) this.d.workers.spawnsRecorded?.(ev.slot);
  }

  /** `slot`: the worker that reported the child (acknowledged once it is recorded; see RunRequest.spawnWindow). */
  protected onChild(parent: PoolTask, childState: unknown, checkpoint: { state: unknown; partial: unknown }, on: string | undefined, slot: number): void {
    const settled = () => this.d.workers.spawnsRecorded?.(slot);
    if (!this.withinBudget(1, undefined)) return settled();
    this.stats.splits++;
    if (this.keepsLatest) parent.latest = checkpoint;
    const child = this.recording({ id: this.ids.fresh(), state: childState, partial: undefined, version: 0 });
    this.write(parent, this.d.ledger.split(parent.id, checkpoint, child.id, childState), [child], settled, () => {
      const snapshot = child.snapshot!;
      // Placement: a child meant for another node is offered there (claimed in the ledger, as a steal is).
      if (on !== undefined && on !== this.d.nodeId && !this.stopped) this.transfers.offer(child, snapshot, on, undefined, 'placement');
      else this.place(child, snapshot);
      this.schedule();
    });
  }

  /**
   * Children spawned together (as states, or as their encoded first records): recorded in one group with the
   * parent's checkpoint, then placed.
   */
  protected onChildren(parent: PoolTask, spawned: unknown[] | EncodedRecords, checkpoint: { state: unknown; partial: unknown }, slot: number): void {
    const children = this.fresh(spawned);
    if (this.keepsLatest) parent.latest = checkpoint;
    this.write(parent, this.d.ledger.spawned(parent.id, children.map((c) => c.snapshot!), { checkpoint }), children, () => this.d.workers.spawnsRecorded?.(slot), () => {
      this.placeAll(children);
      this.schedule();
    });
  }

  /**
   * `children`: spawned since the task's last report and not run, recorded with its completion; `inline`: the
   * spawned tasks its worker ran inline after it, committed with it (their contributions folded into one that
   * counts as that many completions); `ms`: the run time of it all, as its worker measured it.
   */
  protected onDone(task: PoolTask, partial: unknown, done: { children?: unknown[]; encodedChildren?: EncodedRecords; inline?: InlineRuns; ms?: number } = {}): void {
    const started = task.startedAt;
    let took: number | undefined;
    if (done.ms !== undefined || started !== undefined) {
      // The worker's own measure when there is one (a task of a batch waits behind the others before it starts), per task.
      const ran = done.ms ?? this.clock.now() - started!;
      this.stats.workerMs += ran;
      took = ran / (1 + (done.inline?.tasks ?? 0));
      this.averageTaskMs = this.averageTaskMs === undefined ? took : 0.8 * this.averageTaskMs + 0.2 * took;
    }
    this.tasks.move(task, 'completing');
    const inline = done.inline;
    this.stats.splits += inline?.tasks ?? 0;
    const spawned = done.children ?? done.encodedChildren;
    if (!spawned) {
      // Completions arrive in batches (a worker reports a dispatch's together): one ledger group for them all.
      if (this.completions.push({ task, partial, inline, took }) === 1) queueMicrotask(() => this.writeCompletions());
      return this.schedule();
    }
    const children = this.fresh(spawned);
    this.write(task, this.d.ledger.spawned(task.id, children.map((c) => c.snapshot!), { partial, inline }), [task, ...children], undefined, () => {
      this.tasks.move(task, 'gone');
      this.completed(task.id, inline, took);
      this.placeAll(children);
      this.schedule();
    });
    this.schedule();
  }

  /** A completion is durable: it counts (with the tasks run inline after it), and so does its run time (`took`, ms per task). */
  protected completed(taskId: string, inline: InlineRuns | undefined, took: number | undefined): void {
    const tasks = 1 + (inline?.tasks ?? 0);
    this.stats.tasksDone += tasks;
    if (took !== undefined) this.d.histograms?.taskDuration.observe(took / 1000, undefined, tasks);
    this.d.onEvent({ type: 'task-done', taskId });
  }

  /** Writes the completions gathered in this turn as one group; if one was lost, each on its own (to learn which). */
  protected writeCompletions(): void {
    const done = this.completions;
    this.completions = [];
    const one = (c: (typeof done)[number]) => this.write(c.task, this.d.ledger.complete(c.task.id, c.partial, c.inline), [c.task], undefined, () => {
      this.tasks.move(c.task, 'gone');
      this.completed(c.task.id, c.inline, c.took);
      this.schedule();
    });
    if (done.length === 1) return one(done[0]!);
    this.d.ledger.completeAll(done.map((c) => ({ taskId: c.task.id, partial: c.partial, inline: c.inline }))).then(() => {
      for (const c of done) {
        this.tasks.move(c.task, 'gone');
        this.completed(c.task.id, c.inline, c.took);
      }
      this.schedule();
    }, (err: unknown) => {
      if (err instanceof LostOwnership) return done.forEach(one);
      for (const c of done) this.tasks.move(c.task, 'gone');
      this.lost(done[0]!.task, err);
    });
  }

  /** Spawned children under fresh ids, their records being written (counted as splits, as one spawned alone is). */
  protected fresh(spawned: unknown[] | EncodedRecords): PoolTask[] {
    const count = Array.isArray(spawned) ? spawned.length : spawned.ends.length;
    if (!this.withinBudget(count, Array.isArray(spawned) ? undefined : spawned.ends[count - 1] ?? 0)) return [];
    if (Array.isArray(spawned)) {
      this.stats.splits += spawned.length;
      return spawned.map((state) => this.recording({ id: this.ids.fresh(), state, partial: undefined, version: 0 }));
    }
    this.stats.splits += spawned.ends.length;
    return encodedSnapshots(spawned.ends.map(() => this.ids.fresh()), spawned).map((snapshot) => this.recording(snapshot));
  }

  /**
   * Whether `count` new tasks fit the job's pool memory budget here; if not, they are refused (not
   * recorded) and the job fails, once, naming the budget (pool-budget.ts).
   */
  private withinBudget(count: number, stateBytes: number | undefined): boolean {
    if (!this.budget) return true;
    if (this.overBudget) return false;
    const refusal = this.budget.admit(this.tasks.size, count, stateBytes);
    if (refusal === undefined) return true;
    this.overBudget = true;
    this.log.error('pool', refusal);
    this.d.onEvent({ type: 'failed', error: refusal });
    return false;
  }

  /**
   * Why this node takes no task from elsewhere now (stolen, migrated, placed or recovered): the pool memory
   * budget would be exceeded by one more (pool-budget.ts); undefined when it fits or there is no budget.
   */
  protected budgetRefuses(): string | undefined {
    return this.budget?.over(this.tasks.size, 1);
  }

  /** A new child of a task here, whose record is about to be written. */
  private recording(snapshot: TaskSnapshot): PoolTask {
    const child = this.tasks.create(snapshot.id, 'recording');
    child.snapshot = snapshot;
    return child;
  }

  /** An explicit checkpoint: the task keeps running; after a crash it resumes from here. */
  protected onCheckpoint(task: PoolTask, state: unknown, partial: unknown): void {
    if (this.keepsLatest) task.latest = { state, partial };
    this.write(task, this.d.ledger.checkpoint(task.id, state, partial), [], undefined, () => {
      this.stats.checkpoints++;
      this.schedule();
    });
  }

  /**
   * A task threw. With retries left it runs again from its latest durable state (what it split off
   * before exists as separate tasks, so nothing is done twice); then, as its type says, it fails
   * the job or completes with no contribution and is listed among the outcome's failures.
   */
  protected onFailed(task: PoolTask, error: string): void {
    const latest = task.latest;
    const attempt = task.attempts + 1;
    if (attempt <= (this.d.retries ?? 0) && latest && !this.stopped) {
      task.attempts = attempt;
      this.stats.retries++;
      this.log.child({ task: task.id }).info('runtime', `task ${task.id} failed (attempt ${attempt}); running it again: ${firstLine(error)}`);
      return this.onMigrated(task, latest.state, latest.partial);
    }
    if (!this.d.collectFailures) {
      this.tasks.move(task, 'gone');
      this.d.onEvent({ type: 'failed', error: `task ${task.id} failed: ${error}` });
      return;
    }
    this.stats.failedTasks++;
    this.tasks.move(task, 'completing');
    this.write(task, this.d.ledger.complete(task.id, failedContribution(task.id, firstLine(error))), [task], undefined, () => {
      this.tasks.move(task, 'gone');
      this.schedule();
    });
    this.schedule();
  }

  /** A task came back from its worker (to move, or to run again): its checkpoint is written, then it is placed. */
  protected onMigrated(task: PoolTask, state: unknown, partial: unknown): void {
    this.tasks.move(task, 'migrating');
    task.snapshot = { id: task.id, state, partial, version: this.d.ledger.versionOf(task.id) ?? 0 };
    this.write(task, this.d.ledger.checkpoint(task.id, state, partial), [task], undefined, () => {
      const snapshot = { id: task.id, state, partial, version: this.d.ledger.versionOf(task.id) ?? 0 };
      task.snapshot = snapshot;
      this.place(task, snapshot);
      this.schedule();
    });
  }

  /**
   * A ledger write for `owner`: `waiting` are the tasks whose next state depends on it (they leave the
   * table if it fails); a failed write goes to `lost`.
   */
  protected write(owner: PoolTask, pending: Promise<void>, waiting: PoolTask[], settled: (() => void) | undefined, then: () => void): void {
    pending.then(() => {
      settled?.();
      then();
    }, (err: unknown) => {
      settled?.();
      for (const t of waiting) if (t.state !== 'gone') this.tasks.move(t, 'gone');
      this.lost(owner, err);
    });
  }

  /** A ledger write failed: if ownership was lost the task is someone else's now; drop it. */
  protected lost(task: PoolTask, err: unknown): void {
    if (err instanceof LostOwnership) {
      this.log.child({ task: task.id }).info('runtime', `task ${task.id} was taken over elsewhere; dropping the local copy`);
      if (task.state === 'running') {
        this.tasks.move(task, 'abandoned');
        this.stopRun(task);
      }
    } else if (!this.stopped) {
      this.d.onEvent({ type: 'failed', error: `ledger write for task ${task.id} failed: ${err instanceof Error ? err.message : String(err)}` });
    }
    this.schedule();
  }

  /** Stops a task where it runs (its end is reported as usual); a pipelined task still waiting behind another never runs. */
  protected stopRun(task: PoolTask): void {
    const slot = task.slot;
    if (slot === undefined) return;
    const current = this.d.workers.currentTask?.(slot) ?? task.id;
    if (current === task.id) this.d.workers.cancel(slot);
    else this.d.workers.drop?.(slot, task.id);
  }

  /** New tasks recorded together: into the pool, from where `schedule` gives them to workers (in batches) and thieves. */
  protected placeAll(children: readonly PoolTask[]): void {
    for (const c of children) this.tasks.move(c, this.stopped ? 'gone' : 'pooled');
  }
}
