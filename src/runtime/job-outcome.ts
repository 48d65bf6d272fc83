import { isCoordError } from '../coord/errors.js';
import type { CoordClient } from '../coord/types.js';
import { encode } from './codec.js';
import type { JobPaths } from './job-paths.js';
import type { JobOutcome } from './job-spec.js';

/** Writes the job's outcome once; a later writer (a failure after success, say) changes nothing. */
export async function publishOutcome(client: CoordClient, paths: JobPaths, outcome: JobOutcome): Promise<boolean> {
  try {
    await client.create(paths.result, encode(outcome));
    return true;
  } catch (err) {
    if (isCoordError(err, 'NODE_EXISTS')) return false;
    throw err;
  }
}
