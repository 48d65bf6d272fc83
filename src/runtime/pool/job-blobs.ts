/**
 * What a job member does with its node's data plane: obtains the job's shipped code and large input,
 * and stores large ledger values durably — a state or result is referenced from the ledger only once
 * a second member holds it (it asks one with a `hold` message), so it survives the crash of its writer.
 */
import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import { log } from '../../util/log.js';
import type { LedgerBlobs } from './ledger.js';
import type { JobSpec } from '../job/job-spec.js';
import type { TaskRef } from '../worker/task.js';
import { SharedInput } from '../worker/shared-input.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { isBlobRef } from '../../data/blob-values.js';
import { materializeBundle } from '../../data/code-cache.js';
import type { DataPlane } from '../../data/data-plane.js';

/** Asks a peer member to fetch a copy of a blob (the second copy of a checkpoint). */
export interface HoldMessage {
  type: 'hold';
  job: string;
  ref: BlobRef;
  [key: string]: unknown;
}

/** How long one peer gets to take its copy before another is asked (ms). */
const HOLD_WAIT_MS = 15_000;

export interface JobMemberSide {
  spec: JobSpec;
  nodeId: string;
  data: DataPlane;
  /** The other live members of the job. */
  peers(): string[];
  send(to: string, body: HoldMessage): Promise<void>;
}

/**
 * Whether `peer` may fetch blobs of `jobId`: a member of the job, or a node assigned to it (a joining
 * node obtains the job's code before it joins the membership); once the job has ended, any
 * authenticated peer (its submitter fetches a large result; job-result-blob.ts). What every holder's
 * `isMember` asks.
 */
export async function mayFetchJobBlob(client: CoordClient, peer: string, jobId: string, root?: string): Promise<boolean> {
  if ((await client.exists(joinPath(jobPaths(jobId, root).members, peer))) !== null) return true;
  try {
    if ((await client.getData(joinPath(clusterPaths(root).assignments, peer))).data.toString('utf8') === jobId) return true;
  } catch (err) {
    if (!isCoordError(err, 'NO_NODE')) throw err;
  }
  return jobEnded(client, jobId, root);
}

/** Whether a job has ended (its result is written). */
export async function jobEnded(client: CoordClient, jobId: string, root?: string): Promise<boolean> {
  return (await client.exists(jobPaths(jobId, root).result)) !== null;
}

/** The task module to load on this node: shipped code is obtained and written to the local code cache. */
export async function taskRefOnNode(spec: JobSpec, data: DataPlane | undefined, nodeId: string): Promise<TaskRef> {
  if (!spec.code) return spec.ref;
  if (!data) throw new Error(`job ${spec.id} ships its code and node ${nodeId} has no data plane`);
  const bytes = await data.obtain(spec.code, spec.id, `code of ${spec.ref.module}`);
  return { module: await materializeBundle(spec.code.hash, bytes), export: spec.ref.export };
}

/** The job's large input, obtained once per node and shared by its workers (see SharedInput). */
export function obtainInput(spec: JobSpec, data: DataPlane): Promise<SharedInput> {
  const { ref, form } = spec.inputBlob!;
  return data.obtainShared(ref, spec.id, 'job input').then((bytes) => new SharedInput(bytes, form));
}

/** Ledger storage on the data plane: large states and results, each copied to a second member first. */
export function ledgerBlobs(side: JobMemberSide): LedgerBlobs {
  let cursor = 0;
  const replicate = async (ref: BlobRef, what: string) => {
    for (let round = 0; round < 3; round++) {
      const peers = side.peers();
      // Alone in the job there is nobody to copy to: one copy (a crash of this node loses it; see docs/data-plane.md).
      if (peers.length === 0) return;
      const peer = peers[cursor++ % peers.length]!;
      side.send(peer, { type: 'hold', job: side.spec.id, ref }).catch(() => undefined);
      try {
        await side.data.awaitReplicated(ref, 2, HOLD_WAIT_MS);
        return;
      } catch {
        log.warn('data', `${what}: ${peer} did not take a copy within ${HOLD_WAIT_MS} ms; asking another member`);
      }
    }
    throw new Error(`${what} (${ref.size} bytes) could not be copied to a second node of job ${side.spec.id}`);
  };
  return {
    store: async (bytes, what, scope) => {
      const ref = await side.data.share(bytes, side.spec.id, what, scope);
      await replicate(ref, what);
      return ref;
    },
    fetch: (ref, what) => side.data.obtain(ref, side.spec.id, what),
    discard: (ref, scope) => side.data.discard(ref, side.spec.id, scope),
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
  for (const { ref, holders } of await side.data.heldFor(side.spec.id)) {
    const peers = side.peers();
    const want = Math.min(2, peers.length);
    // Only members count: a submitting client or a departed node may be gone at any time.
    const elsewhere = holders.filter((h) => h !== side.nodeId && peers.includes(h));
    if (elsewhere.length >= want) continue;
    const candidates = peers.filter((p) => !elsewhere.includes(p));
    for (const peer of candidates.slice(0, want - elsewhere.length)) side.send(peer, { type: 'hold', job: side.spec.id, ref }).catch(() => undefined);
    try {
      // Held by `want` others and, until it leaves, by this node.
      await awaitHeldBy(side, ref, want);
    } catch {
      failed.push(ref);
    }
  }
  if (failed.length > 0) log.warn('data', `leaving job ${side.spec.id}: ${failed.length} blob(s) are held by fewer than two other members`);
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
export function onHold(side: Pick<JobMemberSide, 'spec' | 'data'>, from: string, m: HoldMessage): void {
  side.data.obtain(m.ref, side.spec.id, `copy asked for by ${from}`).catch((err: unknown) => log.warn('data', `could not hold a copy for ${from}`, err));
}

/** Checks a `hold` message and the reference an offer may carry; returns what is wrong, or undefined. */
export function validateBlobFields(body: { type: string; [key: string]: unknown }): string | undefined {
  if (body.type === 'hold') return isBlobRef(body.ref) ? undefined : 'field "ref" must be a blob reference {hash, size}';
  if (body.type === 'offer') {
    const ref = (body.task as { ref?: unknown } | undefined)?.ref;
    if (ref !== undefined && !isBlobRef(ref)) return 'field "task.ref" must be a blob reference {hash, size}';
  }
  return undefined;
}
