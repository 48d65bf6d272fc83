import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';

/** Ids of the jobs known to the cluster. */
export async function listJobs(client: CoordClient, root?: string): Promise<string[]> {
  try {
    return (await client.getChildren(clusterPaths(root).jobs)).sort();
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
}

/** The node currently leading a job (the first candidate of its election), or null. */
export async function jobLeader(client: CoordClient, jobId: string, root?: string): Promise<string | null> {
  const election = jobPaths(jobId, root).election;
  for (;;) {
    let names: string[];
    try {
      names = (await client.getChildren(election)).sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)));
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null;
      throw err;
    }
    if (names.length === 0) return null;
    try {
      return (JSON.parse((await client.getData(joinPath(election, names[0]!))).data.toString('utf8')) as { id: string }).id;
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err; // it left meanwhile: read again
    }
  }
}
