import { randomUUID } from 'node:crypto';
import { CoordError, isCoordError, isRetryable } from '../coord/errors.js';
import { joinPath } from '../coord/paths.js';
import { MAX_REQUEST_BYTES, requestBytes } from '../coord/request-size.js';
import { existsAcrossLosses, reconnected } from '../coord/tree-ops.js';
import type { CoordClient, Op } from '../coord/types.js';
import { emptyStats, type RecipeStats } from '../coord/recipes/recipe-stats.js';
import { log } from '../util/log.js';
import { decode, encode } from './codec.js';
import type { TaskRecord, TaskSnapshot } from './task-record.js';

/** The node no longer owns the task: another node claimed it (a transfer or crash recovery won). */
export class LostOwnership extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} is owned by another node now`);
    this.name = 'LostOwnership';
  }
}

/**
 * Record versions as a batch sees them while it is built: groups of one batch that touch the same
 * task (two splits of one parent, say) each see the version the previous group will have written.
 */
class Versions {
  private readonly changes = new Map<string, number | undefined>();

  constructor(private readonly base: ReadonlyMap<string, number>) {}

  get(taskId: string): number {
    const v = this.changes.has(taskId) ? this.changes.get(taskId) : this.base.get(taskId);
    if (v === undefined) throw new LostOwnership(taskId);
    return v;
  }

  set(taskId: string, version: number): void {
    this.changes.set(taskId, version);
  }

  delete(taskId: string): void {
    this.changes.set(taskId, undefined);
  }

  /** Applies the batch's changes once it committed (other entries may have changed meanwhile). */
  applyTo(map: Map<string, number>): void {
    for (const [id, v] of this.changes) {
      if (v === undefined) map.delete(id);
      else map.set(id, v);
    }
  }
}

/** One task event: its ops commit together or not at all. */
interface Group {
  taskId: string;
  /** Builds the ops, advancing the batch's view of versions as they will be after them. */
  build: (v: Versions) => Op[];
  /** Result contribution committed with this group (completions). */
  result?: unknown;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * A batch's request stays this far under ZooKeeper's limit (src/coord/request-size.ts), leaving room for
 * a chroot on every path; a burst of large records is split over several transactions, never refused.
 */
const MAX_BATCH_BYTES = MAX_REQUEST_BYTES - 32 * 1024;
const EMPTY_MULTI_BYTES = requestBytes([], true);

/** A batch over MAX_BATCH_BYTES: how many leading groups fit, or why the first cannot be written. */
type Oversized = { fits: number } | { tooLarge: Error };

export interface LedgerPaths {
  tasks: string;
  txns: string;
}

/**
 * A node's writes to its job's ledger, batched into multi transactions and committed in order.
 *
 * - a split creates the child's record and checkpoints the parent in one group;
 * - a completion deletes the record, and its result contribution rides in the data of the
 *   transaction's `txns/<id>` marker, so results and termination commit atomically;
 * - every op on a record the node owns is conditional on the version the node last wrote, so a
 *   node whose task was taken over (recovery, transfer) can never commit for it again;
 * - after a connection loss the marker tells whether the transaction committed (seed 000, Alg. 2).
 */
export class Ledger {
  readonly stats: RecipeStats = emptyStats();
  private readonly versions = new Map<string, number>();
  private queue: Group[] = [];
  private pumping = false;

  constructor(
    private readonly client: CoordClient,
    readonly paths: LedgerPaths,
    readonly nodeId: string,
    private readonly maxBatch = 64,
  ) {}

  /** Records a new child split off (or spawned) by `parentId`, with the parent's checkpoint. */
  split(parentId: string, checkpoint: { state: unknown; partial: unknown }, childId: string, childState: unknown): Promise<void> {
    return this.enqueue(parentId, (v) => {
      const version = v.get(parentId);
      v.set(parentId, version + 1);
      v.set(childId, 0);
      return [
        { op: 'setData', path: this.taskPath(parentId), data: this.recordBytes(checkpoint.state, checkpoint.partial), version },
        { op: 'create', path: this.taskPath(childId), data: this.recordBytes(childState, undefined) },
      ];
    });
  }

  /** Records that `taskId` completed with result contribution `partial`. */
  complete(taskId: string, partial: unknown): Promise<void> {
    return this.enqueue(taskId, (v) => {
      const version = v.get(taskId);
      v.delete(taskId);
      return [{ op: 'delete', path: this.taskPath(taskId), version }];
    }, { value: partial });
  }

  /** Saves a task's state and partial result (before it migrates). */
  checkpoint(taskId: string, state: unknown, partial: unknown): Promise<void> {
    return this.enqueue(taskId, (v) => {
      const version = v.get(taskId);
      v.set(taskId, version + 1);
      return [{ op: 'setData', path: this.taskPath(taskId), data: this.recordBytes(state, partial), version }];
    });
  }

  /**
   * Takes ownership of a task whose record is at `snapshot.version` (a stolen or migrated task,
   * or one recovered from a failed node). Resolves false if someone else changed it first.
   */
  async claim(snapshot: TaskSnapshot): Promise<boolean> {
    try {
      await this.enqueue(snapshot.id, (v) => {
        v.set(snapshot.id, snapshot.version + 1);
        return [{ op: 'setData', path: this.taskPath(snapshot.id), data: this.recordBytes(snapshot.state, snapshot.partial), version: snapshot.version }];
      });
      return true;
    } catch (err) {
      if (err instanceof LostOwnership) return false;
      throw err;
    }
  }

  /**
   * Forgets a task handed to another node (theirs once they claimed it) — only if our entry is
   * still the version we handed out: the same task may have come back to us meanwhile (recovered
   * from the receiver after it crashed), and that newer ownership must stay.
   */
  release(taskId: string, handedOutVersion: number): void {
    if (this.versions.get(taskId) === handedOutVersion) this.versions.delete(taskId);
  }

  /** The version of an owned record, as this node last wrote it. */
  versionOf(taskId: string): number | undefined {
    return this.versions.get(taskId);
  }

  /** Reads one record (or null). */
  async read(taskId: string): Promise<{ record: TaskRecord; version: number } | null> {
    try {
      this.stats.reads++;
      const { data, stat } = await this.client.getData(this.taskPath(taskId));
      return { record: decode<TaskRecord>(data), version: stat.version };
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
  }

  /** Ids of every live task of the job. */
  async list(): Promise<string[]> {
    this.stats.reads++;
    return this.client.getChildren(this.paths.tasks);
  }

  get pending(): number {
    return this.queue.length;
  }

  // ---- batching ----------------------------------------------------------------------

  private enqueue(taskId: string, build: (v: Versions) => Op[], result?: { value: unknown }): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ taskId, build, resolve, reject, ...(result ? { result: result.value } : {}) });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        let batch = this.queue.splice(0, this.maxBatch);
        const txnPath = joinPath(this.paths.txns, randomUUID());
        for (let attempt = 0; batch.length > 0; attempt++) {
          if (attempt > 0) this.stats.retries++;
          const versions = new Versions(this.versions);
          const outcome = await this.commit(batch, txnPath, versions);
          if (outcome === 'committed') {
            versions.applyTo(this.versions);
            for (const g of batch) g.resolve();
            batch = [];
          } else if (outcome instanceof Error) {
            for (const g of batch) g.reject(outcome);
            batch = [];
          } else if (typeof outcome === 'object') {
            // Too many bytes for one request: the tail waits for the next batch (nothing was sent);
            // a first group too large even alone is refused.
            if ('fits' in outcome) this.queue.unshift(...batch.splice(outcome.fits));
            else batch.shift()!.reject(outcome.tooLarge);
            attempt--;
          } else {
            // The group at `outcome` lost its record: reject it, retry the rest.
            const failed = batch[outcome]!;
            failed.reject(new LostOwnership(failed.taskId));
            batch = batch.filter((_, i) => i !== outcome);
          }
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * One attempt: 'committed', the index of a group whose condition failed, `{ fits }` when only the
   * first `fits` groups fit in one request, `{ tooLarge }` when not even the first does, or a fatal error.
   */
  private async commit(batch: Group[], txnPath: string, versions: Versions): Promise<'committed' | number | Oversized | Error> {
    const ops: Op[] = [];
    const owner: number[] = []; // op index -> group index
    const results: unknown[] = [];
    for (const [gi, g] of batch.entries()) {
      let built: Op[];
      try {
        built = g.build(versions);
      } catch (err) {
        if (err instanceof LostOwnership) return gi;
        throw err;
      }
      for (const op of built) {
        ops.push(op);
        owner.push(gi);
      }
      if ('result' in g) results.push(g.result);
    }
    ops.push({ op: 'create', path: txnPath, data: encode({ node: this.nodeId, results }) });
    if (requestBytes(ops, true) > MAX_BATCH_BYTES) return this.fitting(batch, ops, owner, txnPath);
    for (;;) {
      try {
        this.stats.writes++;
        this.stats.transactions++;
        await this.client.multi(ops);
        return 'committed';
      } catch (err) {
        if (isRetryable(err)) {
          try {
            await reconnected(this.client);
            this.stats.reads++;
            if (await existsAcrossLosses(this.client, txnPath)) return 'committed';
          } catch (waitErr) {
            return waitErr instanceof Error ? waitErr : new Error(String(waitErr));
          }
          this.stats.retries++;
          continue;
        }
        if (isCoordError(err, 'BAD_VERSION', 'NO_NODE', 'NODE_EXISTS') && err.opIndex !== undefined) {
          log.debug('ledger', `transaction refused: ${err.message}`, { ops: ops.map((o) => `${o.op} ${o.path} v${'version' in o ? String(o.version) : '-'}`) });
          if (err.opIndex === ops.length - 1) return 'committed'; // our marker exists: an earlier attempt went through
          return owner[err.opIndex]!;
        }
        return err instanceof Error ? err : new Error(String(err));
      }
    }
  }

  /**
   * How many leading groups of an oversized batch fit in one request, counting each group's ops and its
   * share of the marker's results; a first group that cannot fit even alone is refused for good.
   * Only oversized batches come here, so the common small batch pays for no extra encoding.
   */
  private fitting(batch: Group[], ops: Op[], owner: number[], txnPath: string): Oversized {
    let bytes = requestBytes([{ op: 'create', path: txnPath, data: encode({ node: this.nodeId, results: [] }) }], true);
    let fits = 0;
    for (let gi = 0; gi < batch.length; gi++) {
      const g = batch[gi]!;
      const mine = ops.filter((_, i) => owner[i] === gi);
      const share = requestBytes(mine, true) - EMPTY_MULTI_BYTES + ('result' in g ? encode(g.result).length : 0);
      if (bytes + share > MAX_BATCH_BYTES) break;
      bytes += share;
      fits++;
    }
    if (fits > 0) return { fits };
    const alone = bytes + requestBytes(ops.filter((_, i) => owner[i] === 0), true) - EMPTY_MULTI_BYTES;
    const record = ops.find((o, i) => owner[i] === 0 && o.op !== 'delete') ?? ops[0]!;
    return {
      tooLarge: new CoordError('BAD_ARGUMENTS', record.path, undefined,
        `the ledger write for task ${batch[0]!.taskId} needs a request of ${alone} bytes, over the limit of ${MAX_BATCH_BYTES} bytes ` +
        `per ledger transaction (ZooKeeper's jute.maxbuffer of ${MAX_REQUEST_BYTES} less room for paths); keep large task states out of the ledger`),
    };
  }

  private taskPath(taskId: string): string {
    return joinPath(this.paths.tasks, taskId);
  }

  private recordBytes(state: unknown, partial: unknown): Buffer {
    const record: TaskRecord = { owner: this.nodeId, state, partial };
    return encode(record);
  }
}
