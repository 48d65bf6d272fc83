import { isCoordError } from '../../coord/errors.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import { decode, encode } from '../../util/codec.js';
import { jobPaths, type JobPaths } from './job-paths.js';
import type { JobOutcome } from './job-spec.js';

/** Writes the job's outcome once; a later writer (a failure after success, say) changes nothing. */
export function publishOutcome(client: CoordClient, paths: JobPaths, outcome: JobOutcome): Promise<boolean> {
  return publishEncodedOutcome(client, paths, encode(outcome));
}

/** The same with the outcome already encoded (job-result-blob.ts encodes it once to learn its size). */
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
