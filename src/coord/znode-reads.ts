import { isCoordError } from './errors.js';
import type { CoordClient, DataResult } from './types.js';

/** A znode's data and stat, or null when it does not exist. */
export async function readOrNull(client: CoordClient, path: string): Promise<DataResult | null> {
  try {
    return await client.getData(path);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return null;
    throw err;
  }
}

/** Child names, or none when the parent does not exist. */
export async function childrenOrNone(client: CoordClient, path: string): Promise<string[]> {
  try {
    return await client.getChildren(path);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
}
