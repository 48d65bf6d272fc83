import { randomUUID } from 'node:crypto';
import { CoordError, isCoordError } from '../coord/errors.js';
import { joinPath } from '../coord/paths.js';
import { fitsRequest, MAX_REQUEST_BYTES, requestBytes } from '../coord/request-size.js';
import type { CoordClient, Op } from '../coord/types.js';
import { commitMarked, type MarkedCommit } from '../coord/recipes/marked-commit.js';
import { emptyStats, type RecipeStats } from '../coord/recipes/recipe-stats.js';
import { log } from '../util/log.js';
import type { BlobRef } from '../data/blob-directory.js';
import { blobValue, blobValueRef, INLINE_STATE_BYTES } from '../data/blob-values.js';
import { decode, encode } from './codec.js';
import type { TaskRecord, TaskSnapshot, TxnMarker } from './task-record.js';
import type { InlineRuns } from './worker/messages.js';

/**
 * Where a ledger keeps what is too large for a record (the node's data plane, for the job). Without
 * it every state stays inline (the simulation, tests of the ledger alone).
 */
export interface LedgerBlobs {
  /**
   * Stores bytes and resolves once they are durable (held by two nodes where the job has two). With a
   * `scope`, the reference belongs to that record alone and is dropped with `discard` when it moves on.
   */
  store(bytes: Buffer, what: string, scope?: string): Promise<BlobRef>;
  /** The bytes of a reference (local, or fetched from a holder). */
  fetch(ref: BlobRef, what: string): Promise<Buffer>;
  /** A record no longer uses the blob it referenced (superseded or deleted); it goes if nothing else does. */
  discard?(ref: BlobRef, scope: string): Promise<void>;
}

/** The scope of a task record's state blob: one per task, so that its superseded states can go. */
const stateScope = (taskId: string): string => `task.${taskId}`;

/**
 * Blobs are views of the store's shared memory: decode from a private copy, so that a decoded state
 * never aliases the store (tasks mutate their state) and msgpackr never reads shared memory (its
 * native decoder crashed the process on SharedArrayBuffer-backed bytes).
 */
const privateCopy = (bytes: Uint8Array): Buffer => Buffer.from(bytes);

/** A record's data as it will be written: inline, or (once `ready`) a reference to a blob. */
interface Payload {
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

interface Contribution {
  value: unknown;
  tasks?: number;
}

/** One task event: its ops commit together or not at all. */
interface Group {
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
 * A node's writes to its job's ledger, batched into multi transactions and committed in order.
 *
 * - a split creates the child's record and checkpoints the parent in one group; children spawned
 *   together are created in one group with the parent's checkpoint or with its completion;
 * - a completion deletes the record, and its result contribution rides in the data of the
 *   transaction's `txns/<id>` marker, so results and termination commit atomically;
 * - every op on a record the node owns is conditional on the version the node last wrote, so a
 *   node whose task was taken over (recovery, transfer) can never commit for it again;
 * - after a connection loss the marker tells whether the transaction committed (seed 000, Alg. 2).
 */
export class Ledger {
  readonly stats: RecipeStats = emptyStats();
  private readonly versions = new Map<string, number>();
  /** Owned records whose state is a blob, as last written here (an offer sends the reference). */
  private readonly refs = new Map<string, BlobRef>();
  private queue: Group[] = [];
  private pumping = false;

  constructor(
    private readonly client: CoordClient,
    readonly paths: LedgerPaths,
    readonly nodeId: string,
    private readonly maxBatch = 64,
    private readonly blobs?: LedgerBlobs,
  ) {}

  /** Records a new child split off (or spawned) by `parentId`, with the parent's checkpoint. */
  split(parentId: string, checkpoint: { state: unknown; partial: unknown }, childId: string, childState: unknown): Promise<void> {
    const parent = this.payload(parentId, checkpoint.state, checkpoint.partial);
    const child = this.payload(childId, childState, undefined);
    return this.enqueue(parentId, (v) => {
      const version = v.get(parentId);
      v.set(parentId, version + 1);
      v.set(childId, 0);
      return [
        { op: 'setData', path: this.taskPath(parentId), data: parent.data, version },
        { op: 'create', path: this.taskPath(childId), data: child.data },
      ];
    }, undefined, [[parentId, parent], [childId, child]]);
  }

  /**
   * Records that `taskId` completed with result contribution `partial`; `inline`: tasks it spawned that its
   * worker ran inline (never recorded), as many completions, committed with it (their contributions folded into one).
   */
  complete(taskId: string, partial: unknown, inline?: InlineRuns): Promise<void> {
    const { results, ready } = this.contributions(taskId, partial, inline);
    return this.enqueue(taskId, (v) => {
      const version = v.get(taskId);
      v.delete(taskId);
      return [{ op: 'delete', path: this.taskPath(taskId), version }];
    }, results, [[taskId, undefined]], ready);
  }

  /**
   * Records several completions (no children) as one group: they commit together or not at all. If any of
   * the tasks is no longer owned here the whole group is refused with LostOwnership, and the caller records
   * them one by one to find out which (a refused group wrote nothing).
   */
  completeAll(done: ReadonlyArray<{ taskId: string; partial: unknown; inline?: InlineRuns | undefined }>): Promise<void> {
    const results: Contribution[] = [];
    let waits: Array<Promise<void>> | undefined;
    for (const d of done) {
      const c = this.contributions(d.taskId, d.partial, d.inline);
      for (const r of c.results) results.push(r);
      if (c.ready) (waits ??= []).push(c.ready);
    }
    return this.enqueue(done[0]!.taskId, (v) => done.map((d) => {
      const version = v.get(d.taskId);
      v.delete(d.taskId);
      return { op: 'delete', path: this.taskPath(d.taskId), version };
    }), results, done.map((d): [string, undefined] => [d.taskId, undefined]), waits && Promise.all(waits).then(() => undefined));
  }

  /**
   * Records children spawned by `parentId` together, in one group with the parent's `checkpoint` (it
   * runs on) or with its completion (`partial`: its record is deleted and its contribution rides in the
   * marker). Either all of them and the parent's new state commit, or none: a crash in between leaves
   * the parent's older record, and whoever recovers it spawns them again.
   */
  spawned(
    parentId: string, children: ReadonlyArray<{ id: string; state: unknown }>,
    parent: { checkpoint: { state: unknown; partial: unknown } } | { partial: unknown; inline?: InlineRuns | undefined },
  ): Promise<void> {
    const kids = children.map((c): [string, Payload] => [c.id, this.payload(c.id, c.state, undefined)]);
    const creates = (v: Versions, ops: Op[]): Op[] => {
      for (const [id, p] of kids) {
        v.set(id, 0);
        ops.push({ op: 'create', path: this.taskPath(id), data: p.data });
      }
      return ops;
    };
    if ('checkpoint' in parent) {
      const record = this.payload(parentId, parent.checkpoint.state, parent.checkpoint.partial);
      return this.enqueue(parentId, (v) => {
        const version = v.get(parentId);
        v.set(parentId, version + 1);
        return creates(v, [{ op: 'setData', path: this.taskPath(parentId), data: record.data, version }]);
      }, undefined, [[parentId, record], ...kids]);
    }
    const { results, ready } = this.contributions(parentId, parent.partial, parent.inline);
    return this.enqueue(parentId, (v) => {
      const version = v.get(parentId);
      v.delete(parentId);
      return creates(v, [{ op: 'delete', path: this.taskPath(parentId), version }]);
    }, results, [[parentId, undefined], ...kids], ready);
  }

  /** Completions' contributions as the marker will carry them: a large one is stored as a blob first (`ready`). */
  private contributions(taskId: string, partial: unknown, inline: InlineRuns | undefined): { results: Contribution[]; ready: Promise<void> | undefined } {
    const results: Contribution[] = [];
    let waits: Array<Promise<void>> | undefined;
    for (const [value, tasks] of inline ? [[partial, 1], [inline.value, inline.tasks]] as const : [[partial, 1]] as const) {
      const result: Contribution = tasks === 1 ? { value } : { value, tasks };
      results.push(result);
      // Only an object can outgrow a record; numbers and short strings (most results) skip the extra encoding.
      if (this.blobs && value !== null && (typeof value === 'object' || (typeof value === 'string' && value.length > INLINE_STATE_BYTES / 4))) {
        const bytes = encode(value);
        if (bytes.length > INLINE_STATE_BYTES) {
          (waits ??= []).push(this.blobs.store(bytes, `result of task ${taskId}`).then((ref) => void (result.value = blobValue(ref))));
        }
      }
    }
    return { results, ready: waits && Promise.all(waits).then(() => undefined) };
  }

  /** Saves a task's state and partial result (before it migrates). */
  checkpoint(taskId: string, state: unknown, partial: unknown): Promise<void> {
    const record = this.payload(taskId, state, partial);
    return this.enqueue(taskId, (v) => {
      const version = v.get(taskId);
      v.set(taskId, version + 1);
      return [{ op: 'setData', path: this.taskPath(taskId), data: record.data, version }];
    }, undefined, [[taskId, record]]);
  }

  /** The blob holding an owned task's latest record, when it is large (what an offer carries). */
  refOf(taskId: string): BlobRef | undefined {
    return this.refs.get(taskId);
  }

  /** The state and partial result a record reference points to. */
  async load(ref: BlobRef, taskId: string): Promise<{ state: unknown; partial: unknown }> {
    if (!this.blobs) throw new Error(`the record of task ${taskId} is in the data plane, and this ledger has none`);
    return decode<{ state: unknown; partial: unknown }>(privateCopy(await this.blobs.fetch(ref, `state of task ${taskId}`)));
  }

  /** A committed result contribution as the reducer wants it (a large one is fetched from the data plane). */
  async resolveResult(contribution: unknown): Promise<unknown> {
    const ref = blobValueRef(contribution);
    if (!ref) return contribution;
    if (!this.blobs) throw new Error('a result contribution is in the data plane, and this ledger has none');
    return decode(privateCopy(await this.blobs.fetch(ref, 'result contribution')));
  }

  /**
   * Takes ownership of a task whose record is at `snapshot.version` (a stolen or migrated task,
   * or one recovered from a failed node). Resolves false if someone else changed it first.
   */
  async claim(snapshot: TaskSnapshot): Promise<boolean> {
    // A referenced state is claimed by its reference: the blob is durable already and nothing is re-sent.
    const record: Payload = snapshot.ref
      ? { data: encode({ owner: this.nodeId, state: null, partial: null, ref: snapshot.ref } satisfies TaskRecord), ref: snapshot.ref }
      : this.payload(snapshot.id, snapshot.state, snapshot.partial);
    try {
      await this.enqueue(snapshot.id, (v) => {
        v.set(snapshot.id, snapshot.version + 1);
        return [{ op: 'setData', path: this.taskPath(snapshot.id), data: record.data, version: snapshot.version }];
      }, undefined, [[snapshot.id, record]]);
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
    if (this.versions.get(taskId) === handedOutVersion) {
      this.versions.delete(taskId);
      this.refs.delete(taskId);
    }
  }

  /** The version of an owned record, as this node last wrote it. */
  versionOf(taskId: string): number | undefined {
    return this.versions.get(taskId);
  }

  /** Reads one record (or null); a referenced state is obtained from the data plane (`ref` stays set). */
  async read(taskId: string): Promise<{ record: TaskRecord; version: number } | null> {
    let entry: { record: TaskRecord; version: number };
    try {
      this.stats.reads++;
      const { data, stat } = await this.client.getData(this.taskPath(taskId));
      entry = { record: decode<TaskRecord>(data), version: stat.version };
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
    const ref = entry.record.ref;
    if (ref) entry.record = { owner: entry.record.owner, ...(await this.load(ref, taskId)), ref };
    return entry;
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

  private enqueue(taskId: string, build: (v: Versions) => Op[], results: Group['results'], refs: Group['refs'], extra?: Promise<void>): Promise<void> {
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

  /**
   * A record's data: inline when small (or without a data plane); else the state is stored as a blob
   * first (`ready`), and the record holds only its reference. Small records cost one encoding, as before.
   */
  private payload(taskId: string, state: unknown, partial: unknown): Payload {
    const inline = encode({ owner: this.nodeId, state, partial } satisfies TaskRecord);
    if (!this.blobs || inline.length <= INLINE_STATE_BYTES) return { data: inline, ref: undefined };
    const p: Payload = { data: inline, ref: undefined };
    p.ready = this.blobs.store(encode({ state, partial }), `state of task ${taskId}`, stateScope(taskId)).then((ref) => {
      p.ref = ref;
      p.data = encode({ owner: this.nodeId, state: null, partial: null, ref } satisfies TaskRecord);
    });
    return p;
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
    if (!fitsRequest(ops, true, MAX_BATCH_BYTES)) return this.fitting(batch, ops, owner, txnPath);
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
    let bytes = requestBytes([{ op: 'create', path: txnPath, data: encode({ node: this.nodeId, results: [] }) }], true);
    let fits = 0;
    for (let gi = 0; gi < batch.length; gi++) {
      const g = batch[gi]!;
      const mine = ops.filter((_, i) => owner[i] === gi);
      let share = requestBytes(mine, true) - EMPTY_MULTI_BYTES;
      for (const r of g.results ?? []) share += encode(r.value).length;
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

  /**
   * A committed record of `taskId` now references `ref` (or no blob): the blob its previous version
   * referenced is dropped, unless it is the same one. A claimed record keeps the reference it came with.
   */
  private recordRef(taskId: string, ref: BlobRef | undefined): void {
    const old = this.refs.get(taskId);
    if (ref) this.refs.set(taskId, ref);
    else this.refs.delete(taskId);
    if (old && old.hash !== ref?.hash && this.blobs?.discard) {
      this.blobs.discard(old, stateScope(taskId)).catch((err: unknown) => log.warn('ledger', `dropping the superseded state of task ${taskId} failed`, err));
    }
  }

  private taskPath(taskId: string): string {
    return joinPath(this.paths.tasks, taskId);
  }
}
