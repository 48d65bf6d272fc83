import { randomUUID } from 'node:crypto';
import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import { isCoordError, isRetryable } from '../errors.js';
import { joinPath, parentOf } from '../paths.js';
import { mkdirp, reconnected } from '../tree-ops.js';
import type { CoordClient, Op } from '../types.js';
import { watchChildren, type WatchHandle } from '../watch.js';
import { commitMarked } from './marked-commit.js';
import { emptyStats, type RecipeStats } from './recipe-stats.js';

type CreateOp = Extract<Op, { op: 'create' }>;

/**
 * Termination detection after TASKWORK (seed 000, Algorithms 1 and 2).
 *
 * Layout under `base`: `tasks/` is the global task list, `txns/` records committed transactions,
 * `terminated` is created once when the computation has finished.
 *
 * Every completed task toggles its own id and the ids of the children it split off: an id
 * that is absent is created, one that is present is deleted. Each id is toggled exactly twice
 * (by its parent's completion, or the initialisation for the root, and by its own completion),
 * so the list is empty exactly when every task has completed. Each toggle set commits in one
 * multi that also creates `txns/<txnId>`: after a failure or connection loss the tracker
 * retries only while that znode is absent, and because every attempt carries the same create,
 * at most one attempt can ever commit.
 */

export interface CompletedTask {
  id: string;
  children: readonly string[];
}

const TASK_ID = /^[\w.:-]{1,200}$/;

export function validateTaskId(id: string): void {
  if (!TASK_ID.test(id)) throw new Error(`invalid task id "${id}": use letters, digits and _ . : - (at most 200)`);
}

function paths(base: string) {
  return { tasks: joinPath(base, 'tasks'), txns: joinPath(base, 'txns'), terminated: joinPath(base, 'terminated') };
}

/**
 * Algorithm 1 (the seed's coordinator; in tidepool the job's leader): initialise the list with the
 * root task, watch it, and declare termination when it is empty. Initialisation is atomic and
 * happens once per `base`, so a watcher that takes over after a failover attaches to the same list
 * instead of restarting it.
 */
export class TerminationList {
  readonly stats: RecipeStats = emptyStats();
  private readonly events = new Emitter<{ terminated: void; finished: void }>();
  private watch: WatchHandle | undefined;
  private declaring = false;
  private done = false;

  constructor(private readonly client: CoordClient, readonly base: string) {}

  /**
   * Creates the list holding `rootTaskId` (with optional data, e.g. the root task's state) unless
   * this computation was initialised before. Returns true if it did. `alongside`: znodes created in the
   * same transaction — `parents`, the list's missing ancestors, before it; `after`, e.g. what announces
   * the computation, once it exists — so that all exist or none.
   */
  async init(rootTaskId: string, rootData?: Uint8Array, alongside: { parents?: CreateOp[]; after?: Op[] } = {}): Promise<boolean> {
    const parents = alongside.parents ?? [];
    await mkdirp(this.client, parentOf(parents[0]?.path ?? this.base));
    const ops: Op[] = [...parents, ...this.initOps(rootTaskId, rootData), ...(alongside.after ?? [])];
    for (;;) {
      this.stats.writes++;
      this.stats.transactions++;
      try {
        await this.client.multi(ops);
        return true;
      } catch (err) {
        if (isCoordError(err, 'NODE_EXISTS')) return false;
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
      }
    }
  }

  /** The creates that initialise the list holding `rootTaskId`, for a caller that commits them in a transaction of its own (its parent must exist). */
  initOps(rootTaskId: string, rootData?: Uint8Array): CreateOp[] {
    validateTaskId(rootTaskId);
    const p = paths(this.base);
    return [
      { op: 'create', path: this.base },
      { op: 'create', path: p.tasks },
      { op: 'create', path: p.txns },
      { op: 'create', path: joinPath(p.tasks, rootTaskId), ...(rootData ? { data: rootData } : {}) },
    ];
  }

  /**
   * `terminated` fires on exactly one watcher per computation: the one whose create of the
   * `terminated` marker succeeds. Others (e.g. a watcher that took over) see `finished()` resolve.
   */
  on(event: 'terminated', listener: () => void): () => void {
    return this.events.on(event, listener);
  }

  /** Resolves when the computation has terminated, whoever declared it. */
  finished(): Promise<void> {
    if (this.done) return Promise.resolve();
    this.start();
    return new Promise((resolve) => this.events.once('finished', resolve));
  }

  /** Starts watching the list (idempotent). */
  start(): void {
    if (this.watch || this.done) return;
    let listed = 0;
    this.watch = watchChildren(this.client, paths(this.base).tasks, (children) => {
      this.stats.reads++;
      listed = children?.length ?? 0;
      if (children !== null && children.length === 0) {
        this.declare().catch((err: unknown) => {
          this.declaring = false;
          log.warn('termination', 'declaring termination failed', err);
        });
      }
    }, {
      // Each read copies the whole list: with thousands of live tasks, re-read at most every
      // listed/200 ms (≤ 100 ms). A short list, as at the very end, is re-read at once.
      rearmDelayMs: () => Math.min(100, Math.floor(listed / 200)),
    });
  }

  stop(): void {
    this.watch?.close();
    this.watch = undefined;
  }

  /** Creates the marker carrying our token; after a connection loss the token tells whether the create was ours. */
  private async declare(): Promise<void> {
    if (this.declaring) return;
    this.declaring = true;
    this.stop();
    const marker = paths(this.base).terminated;
    const token = Buffer.from(randomUUID());
    let mine = false;
    for (;;) {
      try {
        this.stats.writes++;
        await this.client.create(marker, token);
        mine = true;
        break;
      } catch (err) {
        if (isCoordError(err, 'NODE_EXISTS')) {
          this.stats.reads++;
          mine = (await this.client.getData(marker)).data.equals(token);
          break;
        }
        if (!isRetryable(err)) throw err;
        this.stats.retries++;
        await reconnected(this.client);
      }
    }
    this.done = true;
    if (mine) this.events.emit('terminated', undefined);
    this.events.emit('finished', undefined);
  }
}

export interface TaskTrackerOptions {
  /** Completed tasks folded into one transaction at most (1 = the seed's one transaction per task). */
  maxBatch?: number;
}

interface Pending {
  tasks: CompletedTask[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Algorithm 2 (compute-node side): records completed tasks. With `maxBatch` > 1, completions that
 * arrive while a transaction is in flight are folded into the next one; ids toggled an even number
 * of times within a batch cancel out. A batch is still the union of whole completions, so every
 * state the list passes through is one the unbatched algorithm could reach: never early, never missed.
 */
export class TaskTracker {
  readonly stats: RecipeStats = emptyStats();
  private readonly maxBatch: number;
  private queue: Pending[] = [];
  private running = false;

  constructor(private client: CoordClient, readonly base: string, opts: TaskTrackerOptions = {}) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 64);
  }

  /** Records that `id` completed having split off `children`; resolves once committed. */
  completed(id: string, children: readonly string[] = []): Promise<void> {
    validateTaskId(id);
    for (const c of children) validateTaskId(c);
    return new Promise((resolve, reject) => {
      this.queue.push({ tasks: [{ id, children }], resolve, reject });
      void this.pump();
    });
  }

  /** Replaces the session (after expiry); queued and in-flight batches continue on the new one. */
  setClient(client: CoordClient): void {
    this.client = client;
  }

  /** Number of completions not yet committed. */
  get pending(): number {
    return this.queue.length;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.commit(batch.flatMap((p) => p.tasks));
          for (const p of batch) p.resolve();
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** TrackTasks + TxnCallback: build the toggle transaction from fresh reads, retry until `txns/<txnId>` exists. */
  private async commit(tasks: CompletedTask[]): Promise<void> {
    const p = paths(this.base);
    const toggles = togglesOf(tasks);
    if (toggles.length === 0) return;
    const txnPath = joinPath(p.txns, randomUUID());
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) this.stats.retries++;
      // Fresh reads each attempt: a toggle built from a stale read is refused, and then rebuilt.
      let present: unknown[];
      try {
        present = await Promise.all(toggles.map((id) => {
          this.stats.reads++;
          return this.client.exists(joinPath(p.tasks, id));
        }));
      } catch (err) {
        if (!isRetryable(err)) throw err;
        await reconnected(this.client); // nothing was written yet: read again
        continue;
      }
      const ops: Op[] = [{ op: 'create', path: txnPath }];
      toggles.forEach((id, i) => ops.push(present[i] ? { op: 'delete', path: joinPath(p.tasks, id) } : { op: 'create', path: joinPath(p.tasks, id) }));
      const outcome = await commitMarked(this.client, ops, txnPath, this.stats);
      if (outcome.committed) return;
      if (!isCoordError(outcome.refused, 'NODE_EXISTS', 'NO_NODE')) throw outcome.refused;
    }
  }
}

/** Ids toggled an odd number of times by these completions, in first-seen order. */
export function togglesOf(tasks: readonly CompletedTask[]): string[] {
  const odd = new Map<string, boolean>();
  for (const t of tasks) {
    for (const id of [t.id, ...t.children]) odd.set(id, !(odd.get(id) ?? false));
  }
  return [...odd].filter(([, isOdd]) => isOdd).map(([id]) => id);
}

/** Whether the computation at `base` has been declared terminated (for members other than the watcher). */
export async function isTerminated(client: CoordClient, base: string): Promise<boolean> {
  return (await client.exists(paths(base).terminated)) !== null;
}

