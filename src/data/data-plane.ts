/**
 * A node's data plane: its object store, the blob transfer service on its transport, and the blob
 * directory in the coordination service, behind the few calls a runtime needs.
 *
 *   share(bytes, job)      store locally, reference for the job, list this node as a holder → BlobRef
 *   discard(ref, job, scope)  a record's use is over: the blob goes when nothing else references it
 *   obtain(ref, job)       the bytes, from the local store or fetched once from a holder
 *   obtainShared(ref, job) the same bytes in a SharedArrayBuffer, for worker threads
 *   awaitReplicated(ref, n)  held by n nodes (checkpoints)
 *   collect()              remove blobs of removed jobs, cluster-wide and locally
 *
 * A peer may fetch a blob only for a job that references it and of which it is a member
 * (`isMember`, supplied by the runtime from the job's membership).
 */
import type { CoordClient } from '../coord/types.js';
import type { Message, Transport } from '../transport/types.js';
import { shortHash, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';
import { BlobDirectory, type BlobRef } from './blob-directory.js';
import { BlobTransferService, type BlobTransferOptions } from './blob-transfer.js';
import { ObjectStore, type ObjectStoreOptions } from './object-store.js';

export interface DataPlaneOptions {
  client: CoordClient;
  transport: Transport;
  /** Whether node `peer` is a member of job `jobId` (it runs or ran tasks of it). */
  isMember: (peer: string, jobId: string) => boolean | Promise<boolean>;
  /** The cluster's root znode (the blob directory is `<root>/blobs`). */
  root: string;
  store?: ObjectStoreOptions;
  transfer?: Pick<BlobTransferOptions, 'chunkBytes' | 'window' | 'stallMs' | 'rounds'>;
  /** Whether a job still exists (blobs of removed jobs are collected). */
  jobExists: (jobId: string) => Promise<boolean>;
  /** Whether a job has ended (its result is written); `handOff` does not wait for the blobs of ended jobs. */
  jobEnded?: (jobId: string) => Promise<boolean>;
  /**
   * Subscribe to the transport (default true). A node that routes frames itself passes false and
   * hands frames for which `isBlobMessage` holds to `deliver`.
   */
  subscribe?: boolean;
}

export class DataPlane {
  /** Blobs stored here whose reference is being written (spared by local collection). */
  private readonly pending = new Set<BlobHash>();

  private constructor(
    readonly store: ObjectStore, readonly transfer: BlobTransferService, readonly directory: BlobDirectory,
    private readonly jobEnded?: (jobId: string) => Promise<boolean>,
  ) {}

  static async start(opts: DataPlaneOptions): Promise<DataPlane> {
    const store = await ObjectStore.open(opts.store);
    const directory = new BlobDirectory(opts.client, {
      self: { nodeId: opts.transport.nodeId, address: opts.transport.address },
      root: opts.root, jobExists: opts.jobExists,
    });
    const transfer = new BlobTransferService({
      transport: opts.transport, store, ...opts.transfer, ...(opts.subscribe === false ? { subscribe: false } : {}),
      mayFetch: async (peer, hash, job) => (await opts.isMember(peer, job)) && directory.isReferencedBy(hash, job),
    });
    return new DataPlane(store, transfer, directory, opts.jobEnded);
  }

  /** A blob frame routed here by the node (see `isBlobMessage`). */
  deliver(from: string, m: Message): void {
    this.transfer.deliver(from, m);
  }

  /**
   * Stores `bytes` on this node for `jobId` and returns the reference to pass around instead. With a
   * `scope` the reference is one record's (see BlobDirectory), to be dropped with `discard`.
   */
  async share(bytes: Uint8Array, jobId: string, name = 'blob', scope?: string): Promise<BlobRef> {
    const info = await this.store.put(bytes, name);
    this.pending.add(info.hash);
    try {
      const ref = { hash: info.hash, size: info.size };
      await this.directory.reference(ref, jobId, scope);
      await this.directory.addHolder(info.hash);
      return ref;
    } finally {
      this.pending.delete(info.hash);
    }
  }

  /** The blob's bytes (a read-only view), fetched from a holder the first time this node needs them. */
  async obtain(ref: BlobRef, jobId: string, name = 'blob'): Promise<Buffer> {
    if (!this.store.has(ref.hash)) {
      const where = await this.directory.lookup(ref.hash);
      if (!where) throw new DataError('NOT_FOUND', `${name} ${shortHash(ref.hash)} is not in the blob directory (was its job removed?)`, ref.hash);
      if (where.size !== ref.size) throw new DataError('BAD_INPUT', `${name} ${shortHash(ref.hash)}: reference says ${ref.size} bytes, directory ${where.size}`, ref.hash);
      this.pending.add(ref.hash);
      try {
        await this.transfer.fetch(ref.hash, { size: ref.size, holders: where.holders, job: jobId, name });
        await this.directory.addHolder(ref.hash);
      } finally {
        this.pending.delete(ref.hash);
      }
    }
    return this.store.get(ref.hash);
  }

  /** The blobs stored here that `jobId` references, with the nodes holding each (this one included). */
  async heldFor(jobId: string): Promise<Array<{ ref: BlobRef; holders: string[] }>> {
    const out: Array<{ ref: BlobRef; holders: string[] }> = [];
    for (const { hash } of this.store.list()) {
      const where = await this.directory.lookup(hash);
      if (where?.jobs.includes(jobId)) out.push({ ref: { hash, size: where.size }, holders: where.holders.map((h) => h.nodeId) });
    }
    return out;
  }

  /** Like `obtain`, as a SharedArrayBuffer-backed view to post to worker threads (one copy per node). */
  async obtainShared(ref: BlobRef, jobId: string, name = 'blob'): Promise<Uint8Array> {
    await this.obtain(ref, jobId, name);
    return this.store.getShared(ref.hash);
  }

  /**
   * A scoped use of a blob is over (the record moved on): drops the reference, and the blob with its
   * local bytes if nothing else references it; other holders drop theirs at their next local collection.
   */
  async discard(ref: BlobRef, jobId: string, scope: string): Promise<void> {
    if (!(await this.directory.discard(ref.hash, jobId, scope))) return;
    // As local collection does: spare bytes being shared again right now (their entry is being recreated).
    if (!this.pending.has(ref.hash) && (await this.directory.lookup(ref.hash)) === null) await this.store.delete(ref.hash);
  }

  awaitReplicated(ref: BlobRef, copies: number, timeoutMs?: number): Promise<string[]> {
    return this.directory.awaitReplicated(ref.hash, copies, timeoutMs);
  }

  /** Cluster-wide collection (run by one node) followed by this node's local one. */
  async collect(): Promise<{ removed: BlobHash[]; deletedHere: BlobHash[] }> {
    const removed = await this.directory.collect();
    return { removed, deletedHere: await this.collectLocal() };
  }

  /** Deletes local copies of blobs that are gone from the directory (every node runs this). */
  collectLocal(): Promise<BlobHash[]> {
    return this.directory.collectLocal(this.store, this.pending);
  }

  /**
   * Waits until every blob stored here is held by another node too, or no longer needed (its jobs
   * have ended or were removed), at most `timeoutMs`: a submitting client calls this before it
   * closes, so that the input it submitted outlives it. Resolves with the blobs still held only here.
   */
  async handOff(timeoutMs = 60_000): Promise<BlobHash[]> {
    const deadline = Date.now() + timeoutMs;
    const alone: BlobHash[] = [];
    for (const { hash } of this.store.list()) {
      const where = await this.directory.lookup(hash);
      if (!where || where.holders.some((h) => h.nodeId !== this.directory.selfId)) continue;
      if (this.jobEnded && (await Promise.all(where.jobs.map((j) => this.jobEnded!(j)))).every(Boolean)) continue;
      try {
        await this.directory.awaitReplicated(hash, 2, Math.max(1, deadline - Date.now()));
      } catch {
        alone.push(hash);
      }
    }
    return alone;
  }

  async close(): Promise<void> {
    await this.transfer.close();
    await this.store.close();
  }
}
