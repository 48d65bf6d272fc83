/**
 * The copies of a job's final value too large for its outcome znode (outcome.ts, INLINE_RESULT_BYTES).
 * The leader's node stores the value in its data plane and, before the outcome that references it is
 * published, has a second node take a copy (a `keep` message: that node fetches the blob and is listed
 * among its holders), as a task's checkpoint is copied to a second member (durable-blobs.ts). So the
 * value survives the crash of the leader's node between the job's end and the client's fetch.
 *
 * Who is asked, in this order: the job's other members, then the cluster's other nodes (a job that ran
 * on one node still gets its second copy from an idle node), then the submitting client's data plane
 * when it serves one (JobSpec.submitter: a cluster of one node). A node or client asked that is not a
 * member of the job may fetch the blob from the leader while it copies (`permit`); once the outcome is
 * written any authenticated peer may (blob-access.ts). With nobody to ask (one node, and a submitter
 * without a data plane or gone) the value is kept once, with a warning.
 *
 * The copies are references of the job (not scoped to a record), so they live as long as the job: until
 * the coordinator's retention removes it (docs/data-plane.md, Lifetime), or their holders leave the
 * cluster (a node's store is its own).
 */
import type { BlobRef } from '../../data/blob-directory.js';
import { isBlobRef } from '../../data/blob-values.js';
import type { DataPlane } from '../../data/data-plane.js';
import { log } from '../../util/log.js';
import type { ShareBytes } from './outcome.js';

/** How long one node asked gets to take its copy before the next is asked (ms). */
export const KEEP_WAIT_MS = 15_000;
/** How many nodes are asked at most, one after another. */
const KEEP_ATTEMPTS = 3;

/** The body of a `keep` envelope: take a copy of this blob of the job (its final value). */
export interface KeepBody {
  type: 'result';
  ref: BlobRef;
  [key: string]: unknown;
}

/** What the leader's node gives to keep its job's final value on two nodes. */
export interface ResultKeeping {
  jobId: string;
  data: DataPlane;
  /** Nodes to ask, best first: the job's other live members, then the cluster's other nodes. */
  candidates(): string[];
  /** Sends a `keep` to a node. */
  ask(to: string, body: KeepBody): Promise<void>;
  /** Lets `peer` fetch the job's blobs from this node until the returned function is called. */
  permit(peer: string): () => void;
}

/** A ShareBytes for `finishJob` whose reference resolves once a second node holds the bytes (or nobody could). */
export function sharedOnTwoNodes(side: ResultKeeping): ShareBytes {
  return async (bytes, what) => {
    const ref = await side.data.share(bytes, side.jobId, what);
    await secondCopy(side, ref, what);
    return ref;
  };
}

async function secondCopy(side: ResultKeeping, ref: BlobRef, what: string): Promise<void> {
  const asked = side.candidates().slice(0, KEEP_ATTEMPTS);
  for (const peer of asked) {
    const revoke = side.permit(peer);
    try {
      await side.ask(peer, { type: 'result', ref });
      await side.data.awaitReplicated(ref, 2, KEEP_WAIT_MS);
      return;
    } catch (err) {
      log.warn('data', `${what}: node ${peer} did not take a copy within ${KEEP_WAIT_MS} ms (${err instanceof Error ? err.message : String(err)}); asking another node`);
    } finally {
      revoke();
    }
  }
  log.warn('data', asked.length === 0
    ? `${what} (${ref.size} bytes) is kept by this node alone: no other node is in the cluster`
    : `${what} (${ref.size} bytes) is kept by this node alone: none of ${asked.join(', ')} took a copy`);
}

/** A node asked to keep a copy: fetch it from the leader (which permits it) and hold it as long as the job exists. */
export function onKeep(data: DataPlane | undefined, jobId: string, from: string, body: KeepBody): void {
  if (!data) return log.warn('data', `node ${from} asked for a copy of the result of job ${jobId}, but this node has no data plane`);
  data.obtain(body.ref, jobId, `result of job ${jobId}, a copy asked for by ${from}`)
    .catch((err: unknown) => log.warn('data', `could not keep a copy of the result of job ${jobId} for ${from}`, err));
}

/** Checks a `keep` body; returns what is wrong, or undefined. */
export function validateKeep(body: { type: string; [key: string]: unknown }): string | undefined {
  if (body.type !== 'result') return `a keep message's body must be of type "result", not ${JSON.stringify(body.type)}`;
  return isBlobRef(body.ref) ? undefined : 'field "ref" must be a blob reference {hash, size}';
}
