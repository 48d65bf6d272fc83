import { log as rootLog, type Log } from '../../util/log.js';
import type { Rng } from '../../util/rng.js';
import { LostOwnership, type Ledger } from './ledger.js';
import type { RuntimeMessage } from './pool-messages.js';
import type { StealPlannerOptions } from './steal-planner.js';
import type { TaskRef } from '../worker/task.js';
import { encodedSnapshots, TaskIds, type TaskSnapshot } from './task-snapshot.js';
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
}

/**
 * The half of a job runner that turns its workers' reports into ledger writes: children split off or
 * spawned (recorded with their parent's checkpoint or completion), completions (gathered into one group
 * per turn), checkpoints, migrations and failures; a write that lost its task's ownership drops the task.
 * The scheduling half (JobRunner) decides where the recorded tasks go.
 */
export abstract class JobRunnerRecords {
  /** `workerMs`: time this node's workers spent running tasks that completed here, as they measured it. */
  readonly stats = { workerMs: 0, tasksRun: 0, tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsOut: 0, migrationsIn: 0, placementsOut: 0, checkpoints: 0, retries: 0, failedTasks: 0 };
  /** Each running task's latest durable state (start, split or checkpoint): a retry resumes from it. */
  protected readonly latest = new Map<string, { state: unknown; partial: unknown }>();
  /** Only a task type with retries needs `latest` (most jobs pay nothing for it). */
  protected get keepsLatest(): boolean {
    return (this.d.retries ?? 0) > 0;
  }
  protected readonly attempts = new Map<string, number>();
  protected readonly pool: TaskSnapshot[] = [];
  protected readonly running = new Map<string, number>(); // task -> worker slot
  /** When each running task was started, and the moving average of how long tasks take (ms). */
  protected readonly startedAt = new Map<string, number>();
  protected averageTaskMs: number | undefined;
  protected readonly ids: TaskIds;
  protected inFlight = 0; // ledger writes whose outcome decides where a task goes
  /** Completion writes: no task comes back from them, so they keep the node busy (not idle, not drained) without holding back a steal. */
  protected finishing = 0;
  /** Completions (without children) reported in this turn of the event loop: written as one ledger group at its end. */
  protected completing: Array<{ taskId: string; partial: unknown; inline?: InlineRuns | undefined; took?: number | undefined }> = [];
  protected stopped = false;
  protected readonly clock: Clock;
  protected abstract readonly transfers: TaskTransfers;
  protected readonly log: Log;

  constructor(protected readonly d: JobRunnerDeps) {
    this.ids = new TaskIds(d.nodeId);
    this.clock = d.clock ?? systemClock;
    this.log = d.log ?? rootLog.child({ job: d.jobId, node: d.nodeId });
  }

  /** Puts an owned task where it is wanted (an idle worker, a waiting thief, or the pool). */
  protected abstract place(snapshot: TaskSnapshot): void;
  protected abstract schedule(): void;

  // ---- worker events -----------------------------------------------------------------

  protected onChild(parentId: string, childState: unknown, checkpoint: { state: unknown; partial: unknown }, on?: string): void {
    const childId = this.ids.fresh();
    this.stats.splits++;
    if (this.keepsLatest && this.running.has(parentId)) this.latest.set(parentId, checkpoint);
    this.write(parentId, this.d.ledger.split(parentId, checkpoint, childId, childState), () => {
      const child = { id: childId, state: childState, partial: undefined, version: 0 };
      // Placement: a child meant for another node is offered there (claimed in the ledger, as a steal is).
      if (on !== undefined && on !== this.d.nodeId && !this.stopped) this.transfers.offer(child, on, undefined, 'placement');
      else this.place(child);
      this.schedule();
    });
  }

  /**
   * Children spawned together (as states, or as their encoded first records): recorded in one group with the
   * parent's checkpoint, then placed.
   */
  protected onChildren(parentId: string, spawned: unknown[] | EncodedRecords, checkpoint: { state: unknown; partial: unknown }): void {
    const children = this.fresh(spawned);
    if (this.keepsLatest && this.running.has(parentId)) this.latest.set(parentId, checkpoint);
    this.write(parentId, this.d.ledger.spawned(parentId, children, { checkpoint }), () => {
      this.placeAll(children);
      this.schedule();
    });
  }

  /**
   * `children`: spawned since the task's last report and not run, recorded with its completion; `inline`: the
   * spawned tasks its worker ran inline after it, committed with it (their contributions folded into one that
   * counts as that many completions); `ms`: the run time of it all, as its worker measured it.
   */
  protected onDone(taskId: string, partial: unknown, done: { children?: unknown[]; encodedChildren?: EncodedRecords; inline?: InlineRuns; ms?: number } = {}): void {
    const started = this.startedAt.get(taskId);
    let took: number | undefined;
    if (done.ms !== undefined || started !== undefined) {
      // The worker's own measure when there is one (a task of a batch waits behind the others before it starts), per task.
      const ran = done.ms ?? this.clock.now() - started!;
      this.stats.workerMs += ran;
      took = ran / (1 + (done.inline?.tasks ?? 0));
      this.averageTaskMs = this.averageTaskMs === undefined ? took : 0.8 * this.averageTaskMs + 0.2 * took;
    }
    this.forget(taskId);
    this.attempts.delete(taskId);
    const inline = done.inline;
    this.stats.splits += inline?.tasks ?? 0;
    const spawned = done.children ?? done.encodedChildren;
    if (!spawned) {
      // Completions arrive in batches (a worker reports a dispatch's together): one ledger group for them all.
      this.finishing++;
      if (this.completing.push({ taskId, partial, inline, took }) === 1) queueMicrotask(() => this.writeCompletions());
      return this.schedule();
    }
    const children = this.fresh(spawned);
    this.write(taskId, this.d.ledger.spawned(taskId, children, { partial, inline }), () => {
      this.completed(taskId, inline, took);
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
    const done = this.completing;
    this.completing = [];
    const one = (c: (typeof done)[number]) => this.write(c.taskId, this.d.ledger.complete(c.taskId, c.partial, c.inline), () => {
      this.completed(c.taskId, c.inline, c.took);
      this.schedule();
    }, 'finishing');
    this.finishing -= done.length; // from here on `write` counts them
    if (done.length === 1) return one(done[0]!);
    this.finishing++;
    this.d.ledger.completeAll(done).then(() => {
      this.finishing--;
      for (const c of done) this.completed(c.taskId, c.inline, c.took);
      this.schedule();
    }, (err: unknown) => {
      this.finishing--;
      if (err instanceof LostOwnership) for (const c of done) one(c);
      else this.lost(done[0]!.taskId, err);
    });
  }

  /** Snapshots of spawned children under fresh ids (counted as splits, as one spawned alone is). */
  protected fresh(spawned: unknown[] | EncodedRecords): TaskSnapshot[] {
    if (Array.isArray(spawned)) {
      this.stats.splits += spawned.length;
      return spawned.map((state) => ({ id: this.ids.fresh(), state, partial: undefined, version: 0 }));
    }
    this.stats.splits += spawned.ends.length;
    return encodedSnapshots(spawned.ends.map(() => this.ids.fresh()), spawned);
  }

  /** An explicit checkpoint: the task keeps running; after a crash it resumes from here. */
  protected onCheckpoint(taskId: string, state: unknown, partial: unknown): void {
    if (!this.running.has(taskId)) return;
    if (this.keepsLatest) this.latest.set(taskId, { state, partial });
    this.write(taskId, this.d.ledger.checkpoint(taskId, state, partial), () => {
      this.stats.checkpoints++;
      this.schedule();
    });
  }

  /**
   * A task threw. With retries left it runs again from its latest durable state (what it split off
   * before exists as separate tasks, so nothing is done twice); then, as its type says, it fails
   * the job or completes with no contribution and is listed among the outcome's failures.
   */
  protected onFailed(taskId: string, error: string): void {
    const latest = this.latest.get(taskId);
    this.forget(taskId);
    const attempt = (this.attempts.get(taskId) ?? 0) + 1;
    if (attempt <= (this.d.retries ?? 0) && latest && !this.stopped) {
      this.attempts.set(taskId, attempt);
      this.stats.retries++;
      this.log.child({ task: taskId }).info('runtime', `task ${taskId} failed (attempt ${attempt}); running it again: ${firstLine(error)}`);
      return this.onMigrated(taskId, latest.state, latest.partial);
    }
    this.attempts.delete(taskId);
    if (!this.d.collectFailures) {
      this.d.onEvent({ type: 'failed', error: `task ${taskId} failed: ${error}` });
      return;
    }
    this.stats.failedTasks++;
    this.write(taskId, this.d.ledger.complete(taskId, failedContribution(taskId, firstLine(error))), () => {
      this.schedule();
    });
    this.schedule();
  }

  protected onMigrated(taskId: string, state: unknown, partial: unknown): void {
    this.forget(taskId);
    this.write(taskId, this.d.ledger.checkpoint(taskId, state, partial), () => {
      const version = this.d.ledger.versionOf(taskId) ?? 0;
      this.place({ id: taskId, state, partial, version });
      this.schedule();
    });
  }

  /** Tracks a ledger write (one whose outcome decides where a task goes, or a completion); a failed write goes to `lost`. */
  protected write(taskId: string, pending: Promise<void>, then: () => void, counts: 'placing' | 'finishing' = 'placing'): void {
    const track = (delta: 1 | -1) => (counts === 'placing' ? (this.inFlight += delta) : (this.finishing += delta));
    track(1);
    pending.then(
      () => {
        track(-1);
        then();
      },
      (err: unknown) => {
        track(-1);
        this.lost(taskId, err);
      },
    );
  }

  /** A ledger write failed: if ownership was lost the task is someone else's now; drop it. */
  protected lost(taskId: string, err: unknown): void {
    if (err instanceof LostOwnership) {
      this.log.child({ task: taskId }).info('runtime', `task ${taskId} was taken over elsewhere; dropping the local copy`);
      this.stopRun(taskId);
    } else if (!this.stopped) {
      this.d.onEvent({ type: 'failed', error: `ledger write for task ${taskId} failed: ${err instanceof Error ? err.message : String(err)}` });
    }
    this.schedule();
  }

  /** Stops a task where it runs (its end is reported as usual); a pipelined task still waiting behind another never runs. */
  protected stopRun(taskId: string): void {
    const slot = this.running.get(taskId);
    if (slot === undefined) return;
    const current = this.d.workers.currentTask?.(slot) ?? taskId;
    if (current === taskId) this.d.workers.cancel(slot);
    else this.d.workers.drop?.(slot, taskId);
  }

  /** New tasks recorded together: into the pool, from where `schedule` gives them to workers (in batches) and thieves. */
  protected placeAll(children: readonly TaskSnapshot[]): void {
    if (this.stopped) return;
    for (const c of children) this.pool.push(c);
  }

  protected forget(taskId: string): void {
    this.running.delete(taskId);
    this.latest.delete(taskId);
    this.startedAt.delete(taskId);
  }

}
