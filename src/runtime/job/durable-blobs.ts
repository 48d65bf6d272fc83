/**
 * A job member's durable blobs: large values (a task's checkpoint, a result contribution, an object
 * array's checkpoint) are stored on this node's data plane and count as durable only once a second
 * member holds a copy (asked for with a `hold` message), so that they survive the crash of their
 * writer; before a node leaves a job gracefully, every blob of the job it holds is secured the same way.
 */
import type { BlobRef } from '../../data/blob-directory.js';
import { isBlobRef } from '../../data/blob-values.js';
import type { DataPlane } from '../../data/data-plane.js';
import { log } from '../../util/log.js';

/** Asks a peer member to fetch a copy of a blob (the second copy of a checkpoint). */
export interface HoldMessage {
  type: 'hold';
  job: string;
  ref: BlobRef;
  [key: string]: unknown;
}

/** How long one peer gets to take its copy before another is asked (ms). */
const HOLD_WAIT_MS = 15_000;

/** Where large values go: the data plane of the member's node, for its job. */
export interface DurableBlobs {
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

/** What a member gives to keep its blobs durable. */
export interface JobMemberSide {
  jobId: string;
  nodeId: string;
  data: DataPlane;
  /** The other live members of the job. */
  peers(): string[];
  send(to: string, body: HoldMessage): Promise<void>;
}

/** Storage on the data plane whose blobs are copied to a second member before `store` resolves. */
export function durableBlobs(side: JobMemberSide): DurableBlobs {
  let cursor = 0;
  const replicate = async (ref: BlobRef, what: string) => {
    for (let round = 0; round < 3; round++) {
      const peers = side.peers();
      // Alone in the job there is nobody to copy to: one copy (a crash of this node loses it; see docs/data-plane.md).
      if (peers.length === 0) return;
      const peer = peers[cursor++ % peers.length]!;
      side.send(peer, { type: 'hold', job: side.jobId, ref }).catch(() => undefined);
      try {
        await side.data.awaitReplicated(ref, 2, HOLD_WAIT_MS);
        return;
      } catch {
        log.warn('data', `${what}: ${peer} did not take a copy within ${HOLD_WAIT_MS} ms; asking another member`);
      }
    }
    throw new Error(`${what} (${ref.size} bytes) could not be copied to a second node of job ${side.jobId}`);
  };
  return {
    store: async (bytes, what, scope) => {
      const ref = await side.data.share(bytes, side.jobId, what, scope);
      await replicate(ref, what);
      return ref;
    },
    fetch: (ref, what) => side.data.obtain(ref, side.jobId, what),
    discard: (ref, scope) => side.data.discard(ref, side.jobId, scope),
  };
}

/**
 * Before this node leaves a job gracefully: every blob of the job it holds is made to be held by two
 * other members (every other member where fewer remain), so that after it has gone the job still
 * survives the crash of any one node — a state handed over on drain to the member that also holds its
 * second copy would otherwise live on that member alone. Resolves with the blobs it could not secure.
 */
export async function secureBeforeLeaving(side: JobMemberSide): Promise<BlobRef[]> {
  const failed: BlobRef[] = [];
  for (const { ref, holders } of await side.data.heldFor(side.jobId)) {
    const peers = side.peers();
    const want = Math.min(2, peers.length);
    // Only members count: a submitting client or a departed node may be gone at any time.
    const elsewhere = holders.filter((h) => h !== side.nodeId && peers.includes(h));
    if (elsewhere.length >= want) continue;
    const candidates = peers.filter((p) => !elsewhere.includes(p));
    for (const peer of candidates.slice(0, want - elsewhere.length)) side.send(peer, { type: 'hold', job: side.jobId, ref }).catch(() => undefined);
    try {
      // Held by `want` others and, until it leaves, by this node.
      await awaitHeldBy(side, ref, want);
    } catch {
      failed.push(ref);
    }
  }
  if (failed.length > 0) log.warn('data', `leaving job ${side.jobId}: ${failed.length} blob(s) are held by fewer than two other members`);
  return failed;
}

/** Resolves once `count` members other than this node hold the blob (at most HOLD_WAIT_MS). */
async function awaitHeldBy(side: JobMemberSide, ref: BlobRef, count: number): Promise<void> {
  const deadline = Date.now() + HOLD_WAIT_MS;
  for (;;) {
    // Every new holder is awaited as one more copy; non-members among the holders are skipped by counting again.
    const holders = await side.data.awaitReplicated(ref, 1, Math.max(1, deadline - Date.now()));
    const members = holders.filter((h) => h !== side.nodeId && side.peers().includes(h));
    if (members.length >= count) return;
    await side.data.awaitReplicated(ref, holders.length + 1, Math.max(1, deadline - Date.now()));
  }
}

/** A peer asks this node to hold a copy: fetch it (from a holder that checks our membership). */
export function onHold(side: Pick<JobMemberSide, 'jobId' | 'data'>, from: string, m: HoldMessage): void {
  side.data.obtain(m.ref, side.jobId, `copy asked for by ${from}`).catch((err: unknown) => log.warn('data', `could not hold a copy for ${from}`, err));
}

/** Checks a `hold` message; returns what is wrong, or undefined. */
export function validateHold(body: { type: string; [key: string]: unknown }): string | undefined {
  return isBlobRef(body.ref) ? undefined : 'field "ref" must be a blob reference {hash, size}';
}
