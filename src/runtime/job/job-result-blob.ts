/**
 * A job's final value can be far larger than the coordination service takes in one znode (a
 * Mandelbrot image, a workflow's report): above INLINE_RESULT_BYTES encoded it is stored in the data
 * plane, referenced by the job (so it lives until the job is removed by retention), and the outcome
 * in the `result` znode carries its reference. Whoever reads the outcome fetches the value from a
 * holder; once a job has ended, any authenticated peer may (see `mayFetchJobBlob`).
 */
import type { BlobRef } from '../../data/blob-directory.js';
import { decode, encode } from '../../util/codec.js';
import type { JobOutcome } from './job-spec.js';

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
