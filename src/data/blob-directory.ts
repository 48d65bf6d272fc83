/**
 * Where blobs live, recorded in the coordination service as small references, never the bytes:
 *
 *   <root>/blobs/<hash>                    persistent, {"size": n}
 *   <root>/blobs/<hash>/refs/<jobId>       persistent: job <jobId> uses the blob
 *   <root>/blobs/<hash>/refs/<jobId>~<scope>  persistent: one record of the job uses it (a task's state)
 *   <root>/blobs/<hash>/holders/<nodeId>   ephemeral, {"address": "tcp://…"}: that node's store has it
 *
 * Holders are ephemeral, so a node that dies stops being listed by itself. References are per job:
 * `collect()` drops the references of jobs that no longer exist (a removed job loses its blobs
 * without anyone having to remember them) and then every blob nobody references; each node's
 * `collectLocal()` then deletes the bytes its store holds for blobs that are gone. A scoped reference
 * belongs to one record of a job (a task's latest checkpoint): when the record moves on, its writer
 * drops the reference (`discard`), so that a long job's superseded checkpoints do not pile up until the
 * job is removed; what a crash prevents from being dropped goes with the job.
 */
import { CoordError, isCoordError } from '../coord/errors.js';
import { joinPath } from '../coord/paths.js';
import { acrossLosses, deleteRecursive, mkdirp } from '../coord/tree-ops.js';
import type { CoordClient } from '../coord/types.js';
import type { PeerAddress } from '../transport/types.js';
import { checkBlobHash, shortHash, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';
import type { ObjectStore } from './object-store.js';

/** What travels in ledger records, job specs and messages instead of the bytes. */
export interface BlobRef {
  hash: BlobHash;
  size: number;
}

export interface BlobLocation extends BlobRef {
  holders: PeerAddress[];
  jobs: string[];
}

export interface BlobDirectoryOptions {
  /** The cluster's root znode: the directory is `<root>/blobs`. */
  root: string;
  /** This node, as holders are registered. */
  self: PeerAddress;
  /** Whether a job still exists: `collect()` drops the references of jobs that do not. */
  jobExists: (jobId: string) => Promise<boolean>;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** A reference's znode name: the job, or the job and a scope within it (one record's use). */
export function referenceName(jobId: string, scope?: string): string {
  if (scope === undefined) return jobId;
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(scope)) throw new CoordError('BAD_ARGUMENTS', scope, undefined, `blob reference scope "${scope}" must be 1-200 of A-Z a-z 0-9 . _ -`);
  return `${jobId}~${scope}`;
}

/** The job a reference's znode name belongs to. */
const jobOfReference = (name: string): string => name.split('~', 1)[0]!;

/**
 * Cluster-wide collection from any session (job retention runs it where jobs are pruned): drops the
 * references of jobs that no longer exist, then the blobs nobody references. Returns their hashes.
 */
export function collectBlobs(client: CoordClient, opts: Pick<BlobDirectoryOptions, 'root' | 'jobExists'>): Promise<BlobHash[]> {
  return new BlobDirectory(client, { ...opts, self: { nodeId: '', address: '' } }).collect();
}

export class BlobDirectory {
  readonly base: string;
  private readonly self: PeerAddress;
  private readonly jobExists: (jobId: string) => Promise<boolean>;

  constructor(private readonly client: CoordClient, opts: BlobDirectoryOptions) {
    this.base = joinPath(opts.root, 'blobs');
    this.self = opts.self;
    this.jobExists = opts.jobExists;
  }

  /** This node's id, as it is listed among holders. */
  get selfId(): string {
    return this.self.nodeId;
  }

  /** This node (or client) as peers reach it: how it is listed among holders. */
  get selfPeer(): PeerAddress {
    return this.self;
  }

  /** Records that `jobId` (or one `scope` of it) uses the blob, creating its entry when new. Idempotent. */
  async reference(ref: BlobRef, jobId: string, scope?: string): Promise<void> {
    return acrossLosses(this.client, () => this.referenceOnce(ref, jobId, scope));
  }

  /** One attempt of `reference` (a connection loss ends it). */
  private async referenceOnce(ref: BlobRef, jobId: string, scope?: string): Promise<void> {
    const blob = this.blobPath(ref.hash);
    const name = referenceName(jobId, scope);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.create(joinPath(blob, 'refs', name));
        return;
      } catch (err) {
        if (isCoordError(err, 'NODE_EXISTS')) return;
        if (!isCoordError(err, 'NO_NODE') || attempt > 3) throw err;
      }
      // New blob (or one being collected right now): create its entry, then the reference again.
      await mkdirp(this.client, this.base);
      try {
        await this.client.multi([
          { op: 'create', path: blob, data: json({ size: ref.size }) },
          { op: 'create', path: joinPath(blob, 'refs') },
          { op: 'create', path: joinPath(blob, 'holders') },
        ]);
      } catch (err) {
        if (!isCoordError(err, 'NODE_EXISTS')) throw err;
      }
    }
  }

  /** Drops a reference (its znode name, see referenceName); the blob goes at the next `collect()` if nobody else uses it. */
  async release(hash: BlobHash, name: string): Promise<void> {
    await this.client.delete(joinPath(this.blobPath(hash), 'refs', name)).catch((err: unknown) => {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    });
  }

  /**
   * Drops one scope's reference and, if that was the last one, the blob's entry at once (holders delete
   * their bytes at their next local collection). Returns whether the entry went.
   */
  async discard(hash: BlobHash, jobId: string, scope: string): Promise<boolean> {
    await this.release(hash, referenceName(jobId, scope));
    return this.removeIfUnreferenced(hash);
  }

  /** Lists this node as a holder (ephemeral: it ends with the node's session). The blob must be referenced. */
  async addHolder(hash: BlobHash): Promise<void> {
    return acrossLosses(this.client, () => this.addHolderOnce(hash));
  }

  /** One attempt of `addHolder` (a connection loss ends it). */
  private async addHolderOnce(hash: BlobHash): Promise<void> {
    try {
      await this.client.create(joinPath(this.blobPath(hash), 'holders', this.self.nodeId), json({ address: this.self.address }), 'ephemeral');
    } catch (err) {
      if (isCoordError(err, 'NODE_EXISTS')) return;
      if (isCoordError(err, 'NO_NODE')) throw new DataError('NOT_FOUND', `blob ${shortHash(hash)} is referenced by no job; reference it before holding it`, hash);
      throw err;
    }
  }

  async removeHolder(hash: BlobHash): Promise<void> {
    await this.client.delete(joinPath(this.blobPath(hash), 'holders', this.self.nodeId)).catch((err: unknown) => {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    });
  }

  /** Size, live holders and referencing jobs of a blob, or null when it is unknown. */
  async lookup(hash: BlobHash): Promise<BlobLocation | null> {
    return acrossLosses(this.client, () => this.lookupOnce(hash));
  }

  /** One attempt of `lookup` (a connection loss ends it). */
  private async lookupOnce(hash: BlobHash): Promise<BlobLocation | null> {
    const blob = this.blobPath(checkBlobHash(hash, 'blob lookup'));
    try {
      const { size } = JSON.parse((await this.client.getData(blob)).data.toString()) as { size: number };
      const [holderIds, jobs] = await Promise.all([
        this.client.getChildren(joinPath(blob, 'holders')), this.client.getChildren(joinPath(blob, 'refs')),
      ]);
      const holders: PeerAddress[] = [];
      for (const nodeId of holderIds.sort()) {
        try {
          const { address } = JSON.parse((await this.client.getData(joinPath(blob, 'holders', nodeId))).data.toString()) as { address: string };
          holders.push({ nodeId, address });
        } catch (err) {
          if (!isCoordError(err, 'NO_NODE')) throw err;
        }
      }
      return { hash, size, holders, jobs: [...new Set(jobs.map(jobOfReference))] };
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
  }

  /** True when `jobId` (or a scope of it) references the blob (what an authorization check asks). */
  async isReferencedBy(hash: BlobHash, jobId: string): Promise<boolean> {
    return acrossLosses(this.client, () => this.isReferencedByOnce(hash, jobId));
  }

  /** One attempt of `isReferencedBy` (a connection loss ends it). */
  private async isReferencedByOnce(hash: BlobHash, jobId: string): Promise<boolean> {
    const refs = joinPath(this.blobPath(hash), 'refs');
    if ((await this.client.exists(joinPath(refs, jobId))) !== null) return true;
    try {
      return (await this.client.getChildren(refs)).some((name) => jobOfReference(name) === jobId);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return false;
      throw err;
    }
  }

  /**
   * Resolves once at least `copies` nodes hold the blob (a checkpoint may be referenced from the ledger
   * only then, so that it survives the crash of the node that wrote it). Rejects after `timeoutMs`.
   */
  awaitReplicated(hash: BlobHash, copies: number, timeoutMs = 30_000): Promise<string[]> {
    const holders = joinPath(this.blobPath(hash), 'holders');
    return new Promise<string[]>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(() => finish(new DataError('UNAVAILABLE', `blob ${shortHash(hash)} is held by fewer than ${copies} nodes after ${timeoutMs} ms`, hash)), timeoutMs);
      const finish = (err: unknown, ids?: string[]) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(ids!);
      };
      const check = () => {
        if (done) return;
        this.client.getChildren(holders, () => check()).then(
          (ids) => ids.length >= copies && finish(undefined, ids.sort()),
          (err: unknown) => finish(isCoordError(err, 'NO_NODE') ? new DataError('NOT_FOUND', `blob ${shortHash(hash)} is not in the directory`, hash) : err),
        );
      };
      check();
    });
  }

  /**
   * Cluster-wide collection (any one session runs it; job retention does, where it prunes jobs): references
   * of jobs that no longer exist are dropped, then every blob without references is removed. Returns the
   * removed hashes.
   */
  async collect(): Promise<BlobHash[]> {
    let hashes: string[];
    try {
      hashes = await this.client.getChildren(this.base);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return [];
      throw err;
    }
    const removed: BlobHash[] = [];
    for (const hash of hashes) {
      const refs = joinPath(this.base, hash, 'refs');
      let jobs: string[];
      try {
        jobs = await this.client.getChildren(refs);
      } catch (err) {
        if (isCoordError(err, 'NO_NODE')) jobs = [];
        else throw err;
      }
      let live = 0;
      for (const name of jobs) {
        if (await this.jobExists(jobOfReference(name))) live++;
        else await this.release(hash, name);
      }
      if (live === 0 && (await this.removeIfUnreferenced(hash))) removed.push(hash);
    }
    return removed;
  }

  /**
   * Deletes from this node's store every blob the directory no longer knows (and stops holding it).
   * `keep` names blobs to spare (stored but not referenced yet). Returns the deleted hashes.
   */
  async collectLocal(store: ObjectStore, keep: ReadonlySet<BlobHash> = new Set()): Promise<BlobHash[]> {
    const deleted: BlobHash[] = [];
    for (const { hash } of store.list()) {
      if (keep.has(hash)) continue;
      if ((await this.client.exists(this.blobPath(hash))) !== null) continue;
      await store.delete(hash);
      deleted.push(hash);
    }
    return deleted;
  }

  // ---- internals ---------------------------------------------------------------------

  /**
   * Removes an unreferenced blob's entry. The refs znode goes first and only while empty, so a job
   * that references the blob at this moment either keeps it (NOT_EMPTY) or recreates it.
   */
  private async removeIfUnreferenced(hash: BlobHash): Promise<boolean> {
    const blob = this.blobPath(hash);
    try {
      await this.client.delete(joinPath(blob, 'refs'));
    } catch (err) {
      if (isCoordError(err, 'NOT_EMPTY')) return false;
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
    await deleteRecursive(this.client, blob);
    return true;
  }

  private blobPath(hash: BlobHash): string {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new CoordError('BAD_ARGUMENTS', hash, undefined, 'not a blob hash');
    return joinPath(this.base, hash);
  }
}
