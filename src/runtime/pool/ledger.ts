import { isCoordError } from '../../coord/errors.js';
import type { CoordClient, Op } from '../../coord/types.js';
import { log } from '../../util/log.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { blobValue, blobValueRef, INLINE_STATE_BYTES } from '../../data/blob-values.js';
import { decode, encode } from '../../util/codec.js';
import { LedgerBatches, LostOwnership, type Contribution, type LedgerPaths, type Payload, type Versions } from './ledger-batches.js';
import type { TaskRecord } from '../worker/task-record.js';
import type { TaskSnapshot } from './task-snapshot.js';
import type { InlineRuns } from '../worker/messages.js';
import type { DurableBlobs } from '../job/durable-blobs.js';

export { LostOwnership, type LedgerPaths };


/** The scope of a task record's state blob: one per task, so that its superseded states can go. */
const stateScope = (taskId: string): string => `task.${taskId}`;

/**
 * Blobs are views of the store's shared memory: decode from a private copy, so that a decoded state
 * never aliases the store (tasks mutate their state) and msgpackr never reads shared memory (its
 * native decoder crashed the process on SharedArrayBuffer-backed bytes).
 */
const privateCopy = (bytes: Uint8Array): Buffer => Buffer.from(bytes);

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
export class Ledger extends LedgerBatches {
  /** Owned records whose state is a blob, as last written here (an offer sends the reference). */
  private readonly refs = new Map<string, BlobRef>();

  constructor(
    client: CoordClient,
    paths: LedgerPaths,
    nodeId: string,
    maxBatch = 64,
    /** Where what is too large for a record goes; without it every state stays inline (the simulation, tests of the ledger alone). */
    private readonly blobs?: DurableBlobs,
  ) {
    super(client, paths, nodeId, maxBatch);
  }

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
    parentId: string, children: ReadonlyArray<{ id: string; state: unknown; encoded?: Uint8Array | undefined }>,
    parent: { checkpoint: { state: unknown; partial: unknown } } | { partial: unknown; inline?: InlineRuns | undefined },
  ): Promise<void> {
    const kids = children.map((c): [string, Payload] => [c.id, c.encoded ? this.encodedPayload(c.id, c.encoded) : this.payload(c.id, c.state, undefined)]);
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
    // No temporary arrays: a completion is written per task of every short-task job.
    const results: Contribution[] = [{ value: partial }];
    if (inline) results.push(inline.tasks === 1 ? { value: inline.value } : { value: inline.value, tasks: inline.tasks });
    let waits: Array<Promise<void>> | undefined;
    for (const result of this.blobs ? results : []) {
      const value = result.value;
      // Only an object can outgrow a record; numbers and short strings (most results) skip the extra encoding.
      if (value !== null && (typeof value === 'object' || (typeof value === 'string' && value.length > INLINE_STATE_BYTES / 4))) {
        const bytes = encode(value);
        if (bytes.length > INLINE_STATE_BYTES) {
          (waits ??= []).push(this.blobs!.store(bytes, `result of task ${taskId}`).then((ref) => void (result.value = blobValue(ref))));
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

  /** A child's first record as its worker encoded it (`{ owner, state, partial: undefined }`): written as it is when small. */
  private encodedPayload(taskId: string, encoded: Uint8Array): Payload {
    if (this.blobs && encoded.length > INLINE_STATE_BYTES) return this.payload(taskId, decode<TaskRecord>(encoded).state, undefined);
    return { data: Buffer.isBuffer(encoded) ? encoded : Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength), ref: undefined };
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

  /**
   * A committed record of `taskId` now references `ref` (or no blob): the blob its previous version
   * referenced is dropped, unless it is the same one. A claimed record keeps the reference it came with.
   */
  protected recordRef(taskId: string, ref: BlobRef | undefined): void {
    if (ref === undefined && this.refs.size === 0) return; // the common case: no record of this node references a blob
    const old = this.refs.get(taskId);
    if (ref) this.refs.set(taskId, ref);
    else this.refs.delete(taskId);
    if (old && old.hash !== ref?.hash && this.blobs?.discard) {
      this.blobs.discard(old, stateScope(taskId)).catch((err: unknown) => log.warn('ledger', `dropping the superseded state of task ${taskId} failed`, err));
    }
  }
}
