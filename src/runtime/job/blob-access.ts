/**
 * What the data plane asks about jobs, answered from the coordination service: which peers may fetch
 * a job's blobs, whether a job still exists (blobs of removed jobs are collected) and whether it has
 * ended (a submitter stops waiting to hand off blobs of ended jobs).
 */
import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { acrossLosses } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { clusterPaths, jobPaths } from './job-paths.js';

/**
 * Whether `peer` may fetch blobs of `jobId`: a member of the job, or a node assigned to it (a joining
 * node obtains the job's code before it joins the membership); once the job has ended, any
 * authenticated peer (its submitter fetches a large result; outcome.ts). What every holder's
 * `isMember` asks. Read again after a connection loss, once the session is back: refused in the
 * meantime (a ZooKeeper leader election, say), a node joining a job would give up on its code or input.
 */
export function mayFetchJobBlob(client: CoordClient, peer: string, jobId: string, root?: string): Promise<boolean> {
  return acrossLosses(client, async () => {
    if ((await client.exists(joinPath(jobPaths(jobId, root).members, peer))) !== null) return true;
    try {
      if ((await client.getData(joinPath(clusterPaths(root).assignments, peer))).data.toString('utf8') === jobId) return true;
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
    return jobEnded(client, jobId, root);
  });
}

/** Whether a job has ended (its result is written). */
export async function jobEnded(client: CoordClient, jobId: string, root?: string): Promise<boolean> {
  return (await client.exists(jobPaths(jobId, root).result)) !== null;
}

/** Whether a job still exists (its znode; retention removes it with everything under it). */
export async function jobExists(client: CoordClient, jobId: string, root?: string): Promise<boolean> {
  return (await client.exists(jobPaths(jobId, root).base)) !== null;
}
