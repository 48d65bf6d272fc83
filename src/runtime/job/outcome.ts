/**
 * How a job ends: its outcome, written once to `<job>/result` (the first writer wins: a failure after
 * success, a cancel after the end change nothing). Every member watches it and leaves when it
 * appears; a client awaits it. The leader's kind ends the job with `finish` (after the
 * acknowledgement of the control request that asked for it, if any), a member's kind with `fail`,
 * an operator with `cancelJob`.
 *
 * A final value can be far larger than the coordination service takes in one znode (a Mandelbrot
 * image, a workflow's report): above INLINE_RESULT_BYTES encoded it is stored in the data plane,
 * referenced by the job (so it lives until retention removes the job), and the outcome carries its
 * reference. Whoever reads the outcome fetches the value from a holder; once a job has ended, any
 * authenticated peer may (see blob-access.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isCoordError } from '../../coord/errors.js';
import type { ControlRequest } from '../../coord/recipes/control-channel.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import type { BlobRef } from '../../data/blob-directory.js';
import { decode, encode } from '../../util/codec.js';
import { jobPaths, type JobPaths } from './job-paths.js';

/** A task that failed for good under the task pool's 'collect' failure policy (listed in the outcome). */
export interface TaskFailure {
  /** The task's id. */
  task: string;
  /** Its error message. */
  error: string;
}

/** How a job ended, as stored in its `result` znode. */
export type JobOutcome =
  /**
   * `completions`: tasks completed (a task-pool job). `failures`: tasks that failed for good under the
   * 'collect' failure policy (absent when none did). `valueRef`: a value too large for the coordination
   * service is in the data plane and `value` is undefined in the znode; `resolveOutcome` fetches it.
   */
  | { status: 'done'; value: unknown; finishedAt: number; completions: number; failures?: TaskFailure[]; valueRef?: BlobRef }
  | { status: 'failed'; error: string; finishedAt: number }
  | { status: 'cancelled'; finishedAt: number };

/** Writes the job's outcome once; a later writer (a failure after success, say) changes nothing. */
export function publishOutcome(client: CoordClient, paths: JobPaths, outcome: JobOutcome): Promise<boolean> {
  return publishEncodedOutcome(client, paths, encode(outcome));
}

/** The same with the outcome already encoded (`encodeOutcome` encodes it once to learn its size). */
export async function publishEncodedOutcome(client: CoordClient, paths: JobPaths, data: Buffer): Promise<boolean> {
  try {
    await client.create(paths.result, data);
    return true;
  } catch (err) {
    if (isCoordError(err, 'NODE_EXISTS')) return false;
    throw err;
  }
}

/**
 * Encoded values up to this size stay in the `result` znode (512 KiB: well inside ZooKeeper's 1 MiB per
 * request, so every value that fitted before still reaches a client without a data plane).
 */
export const INLINE_RESULT_BYTES = 512 * 1024;

/** Stores a job's bytes in the data plane under the job; resolves with their reference. */
export type ShareBytes = (bytes: Uint8Array, what: string) => Promise<BlobRef>;
/** Fetches a job's blob from a holder. */
export type ObtainBytes = (ref: BlobRef, what: string) => Promise<Uint8Array>;

/**
 * The outcome as it is to be written, encoded once: a large value is stored first and replaced by its
 * reference (then the value is encoded a second time, alone — only on this rare path).
 */
export async function encodeOutcome(outcome: JobOutcome, jobId: string, share: ShareBytes | undefined): Promise<Buffer> {
  const whole = encode(outcome);
  if (outcome.status !== 'done' || outcome.valueRef || whole.length <= INLINE_RESULT_BYTES) return whole;
  if (!share) {
    return encode({ status: 'failed', error: `the result of job ${jobId} is ${whole.length} bytes encoded, over the ${INLINE_RESULT_BYTES}-byte limit for a value without a data plane`, finishedAt: outcome.finishedAt });
  }
  return encode({ ...outcome, value: undefined, valueRef: await share(encode(outcome.value), `result of job ${jobId}`) });
}

/** The outcome with its value in place (fetched when it was stored as a blob). */
export async function resolveOutcome(outcome: JobOutcome, jobId: string, obtain: ObtainBytes | undefined): Promise<JobOutcome> {
  if (outcome.status !== 'done' || !outcome.valueRef) return outcome;
  const ref = outcome.valueRef;
  if (!obtain) {
    throw new Error(`the result of job ${jobId} (${ref.size} bytes) is held in the data plane: connect with the cluster secret (Cluster.connect(connection, { secret })) to fetch it`);
  }
  const value = decode<unknown>(Buffer.from(await obtain(ref, `result of job ${jobId}`)));
  return { ...outcome, value };
}

/** The control request whose handler is running (carried through its awaits). */
const serving = new AsyncLocalStorage<ControlRequest>();

/** Runs a kind's control handler so that a `finish` it calls is published after the request's ack. */
export function serveControl<T>(req: ControlRequest, handler: () => T): T {
  return serving.run(req, handler);
}

/**
 * The leader context's `finish`. A large value is stored in the data plane first (`share`). Called by
 * a control handler (a `stop` request that ends the job), the outcome is published right after that
 * request's acknowledgement: its requester, who stops waiting once the job has ended, always sees the
 * acknowledgement first. Resolves false if the job already had an outcome.
 */
export async function finishJob(client: CoordClient, paths: JobPaths, outcome: JobOutcome, share?: ShareBytes): Promise<boolean> {
  const req = serving.getStore();
  // Deferred, the outcome's fate is not known when this resolves: learn now whether the job already has one.
  // Not deferred too: a member elected after the leader ended the job (and left) finishes it again, and
  // storing a large value that nobody will reference, copy included, is wasted.
  if (await client.exists(paths.result)) return false;
  const data = await encodeOutcome(outcome, paths.id, share);
  if (!req) return publishEncodedOutcome(client, paths, data);
  req.afterAck(() => publishEncodedOutcome(client, paths, data));
  return true;
}

/**
 * Cancels a job: its outcome becomes `cancelled` (unless it already has one), its members stop
 * their tasks and leave, and its nodes are free for other jobs. Returns false if the job had
 * already ended; throws if there is no such job.
 */
export async function cancelJob(client: CoordClient, jobId: string, root?: string): Promise<boolean> {
  const paths = jobPaths(jobId, root);
  if (!(await client.exists(paths.spec))) throw new Error(`no job ${jobId} in the cluster`);
  return publishOutcome(client, paths, { status: 'cancelled', finishedAt: Date.now() });
}

/** Resolves with the job's outcome once it has one (watching, never polling). */
export function awaitOutcome(client: CoordClient, jobId: string, root?: string): Promise<JobOutcome> {
  const paths = jobPaths(jobId, root);
  return new Promise((resolve, reject) => {
    const handle = watchData(client, paths.result, (data) => {
      if (!data) return;
      handle.close();
      resolve(decode<JobOutcome>(data.data));
    }, { onEnd: (reason) => reject(new Error(`lost the coordination session while waiting for job ${jobId} (${reason})`)) });
  });
}
