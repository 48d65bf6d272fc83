import { randomUUID } from 'node:crypto';
import { CoordError, isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { aclBytes } from '../../coord/access.js';
import { fitsRequest, MAX_REQUEST_BYTES, requestBytes } from '../../coord/request-size.js';
import type { CoordClient, Op } from '../../coord/types.js';
import { commitMarked, type MarkedCommit } from '../../coord/recipes/marked-commit.js';
import { emptyStats, type RecipeStats } from '../../coord/recipes/recipe-stats.js';
import { log } from '../../util/log.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { encode } from '../../util/codec.js';

/**
 * The data of a ledger transaction's marker (`txns/<id>`): the node that committed it and the result
 * contributions of the tasks it completed. `tasks[i]`, when present, is how many completed tasks
 * `results[i]` stands for (tasks run inline after their parent fold into one contribution); 1 otherwise.
 */
export interface TxnMarker {
  node: string;
  results: unknown[];
  tasks?: number[];
}

/** A record's data as it will be written: inline, or (once `ready`) a reference to a blob. */
export interface Payload {
  data: Buffer;
  ref: BlobRef | undefined;
  ready?: Promise<void>;
}

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
export class Versions {
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
    // forEach: no entry array per change (a batch changes a version per task it records).
    this.changes.forEach((v, id) => {
      if (v === undefined) map.delete(id);
      else map.set(id, v);
    });
  }
}

export interface Contribution {
  value: unknown;
  tasks?: number;
}

/** One task event: its ops commit together or not at all. */
export interface Group {
  taskId: string;
  /** Builds the ops, advancing the batch's view of versions as they will be after them. */
  build: (v: Versions) => Op[];
  /**
   * Result contributions committed with this group (completions), each standing for `tasks` completed tasks
   * (default 1; more for the folded contributions of tasks run inline); a `value` may become a blob reference before it commits.
   */
  results?: Contribution[];
  resolve: () => void;
  reject: (err: unknown) => void;
  /** Large payloads being stored as blobs first: the group keeps its place in the queue meanwhile. */
  ready?: Promise<void>;
  prepared: boolean;
  failed?: unknown;
  /** The record reference each task has once this group commits (undefined: inline, or deleted). */
  refs: Array<[string, Payload | undefined]>;
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
 * The batching half of a node's ledger: task events queued as groups, committed in order as multi
 * transactions with a `txns/<id>` marker, each op conditional on the version this node last wrote.
 */
export abstract class LedgerBatches {
  readonly stats: RecipeStats = emptyStats();
  protected readonly versions = new Map<string, number>();
  private queue: Group[] = [];
  private pumping = false;
  /** The access list every create of this session carries, as counted in a request's size. */
  private readonly acl: number;

  constructor(
    protected readonly client: CoordClient,
    readonly paths: LedgerPaths,
    readonly nodeId: string,
    private readonly maxBatch: number,
  ) {
    this.acl = aclBytes(client.acl);
  }

  get pending(): number {
    return this.queue.length;
  }

  protected enqueue(taskId: string, build: (v: Versions) => Op[], results: Group['results'], refs: Group['refs'], extra?: Promise<void>): Promise<void> {
    // The common case (small inline records, no blob pending) allocates nothing beyond the group.
    let waits: Promise<void>[] | undefined;
    for (const [, p] of refs) if (p?.ready) (waits ??= []).push(p.ready);
    if (extra) (waits ??= []).push(extra);
    return new Promise((resolve, reject) => {
      const group: Group = { taskId, build, resolve, reject, refs, prepared: waits === undefined, ...(results ? { results } : {}) };
      if (waits !== undefined) {
        group.ready = Promise.all(waits).then(
          () => void (group.prepared = true),
          (err: unknown) => { group.prepared = true; group.failed = err; },
        );
        void group.ready.then(() => this.pump());
      }
      this.queue.push(group);
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        // Groups commit in order: one whose blobs are still being stored holds back those behind it.
        const head = this.queue[0]!;
        if (!head.prepared) {
          await head.ready;
          continue;
        }
        let take = 0;
        while (take < this.queue.length && take < this.maxBatch && this.queue[take]!.prepared) take++;
        let batch = this.queue.splice(0, take);
        if (batch.some((g) => g.failed !== undefined)) {
          for (const g of batch) if (g.failed !== undefined) g.reject(g.failed);
          batch = batch.filter((g) => g.failed === undefined);
        }
        const txnPath = joinPath(this.paths.txns, randomUUID());
        for (let attempt = 0; batch.length > 0; attempt++) {
          if (attempt > 0) this.stats.retries++;
          const versions = new Versions(this.versions);
          const outcome = await this.commit(batch, txnPath, versions);
          if (outcome === 'committed') {
            versions.applyTo(this.versions);
            for (const g of batch) for (const [id, p] of g.refs) this.recordRef(id, p?.ref);
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
    // How many tasks each contribution stands for, when one stands for several (tasks run inline).
    let tasks: number[] | undefined;
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
      for (const r of g.results ?? []) {
        if (r.tasks !== undefined && r.tasks !== 1) (tasks ??= results.map(() => 1))[results.length] = r.tasks;
        else tasks?.push(1);
        results.push(r.value);
      }
    }
    ops.push({ op: 'create', path: txnPath, data: encode({ node: this.nodeId, results, ...(tasks ? { tasks } : {}) } satisfies TxnMarker) });
    if (!fitsRequest(ops, true, MAX_BATCH_BYTES, 0, this.acl)) return this.fitting(batch, ops, owner, txnPath);
    let outcome: MarkedCommit;
    try {
      outcome = await commitMarked(this.client, ops, txnPath, this.stats);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
    if (outcome.committed) return 'committed';
    const { refused } = outcome;
    if (!isCoordError(refused, 'BAD_VERSION', 'NO_NODE', 'NODE_EXISTS')) return refused;
    log.debug('ledger', `transaction refused: ${refused.message}`, { ops: ops.map((o) => `${o.op} ${o.path} v${'version' in o ? String(o.version) : '-'}`) });
    return owner[refused.opIndex]!;
  }

  /**
   * How many leading groups of an oversized batch fit in one request, counting each group's ops and its
   * share of the marker's results; a first group that cannot fit even alone is refused for good.
   * Only oversized batches come here, so the common small batch pays for no extra encoding.
   */
  private fitting(batch: Group[], ops: Op[], owner: number[], txnPath: string): Oversized {
    let bytes = requestBytes([{ op: 'create', path: txnPath, data: encode({ node: this.nodeId, results: [] }) }], true, 0, this.acl);
    let fits = 0;
    for (let gi = 0; gi < batch.length; gi++) {
      const g = batch[gi]!;
      const mine = ops.filter((_, i) => owner[i] === gi);
      let share = requestBytes(mine, true, 0, this.acl) - EMPTY_MULTI_BYTES;
      for (const r of g.results ?? []) share += encode(r.value).length;
      if (bytes + share > MAX_BATCH_BYTES) break;
      bytes += share;
      fits++;
    }
    if (fits > 0) return { fits };
    const alone = bytes + requestBytes(ops.filter((_, i) => owner[i] === 0), true, 0, this.acl) - EMPTY_MULTI_BYTES;
    const record = ops.find((o, i) => owner[i] === 0 && o.op !== 'delete') ?? ops[0]!;
    return {
      tooLarge: new CoordError('BAD_ARGUMENTS', record.path, undefined,
        `the ledger write for task ${batch[0]!.taskId} needs a request of ${alone} bytes, over the limit of ${MAX_BATCH_BYTES} bytes ` +
        `per ledger transaction (ZooKeeper's jute.maxbuffer of ${MAX_REQUEST_BYTES} less room for paths); keep large task states out of the ledger`),
    };
  }

  /**
   * A committed record of `taskId` now references `ref` (or no blob): the blob its previous version
   * referenced is dropped, unless it is the same one. A claimed record keeps the reference it came with.
  /** A committed record of `taskId` now references `ref` (or no blob). */
  protected abstract recordRef(taskId: string, ref: BlobRef | undefined): void;

  protected taskPath(taskId: string): string {
    return joinPath(this.paths.tasks, taskId);
  }
}
