import { isCoordError } from '../../coord/errors.js';
import type { CoordClient } from '../../coord/types.js';
import { encode } from '../../util/codec.js';
import type { JobPaths } from './job-paths.js';
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
