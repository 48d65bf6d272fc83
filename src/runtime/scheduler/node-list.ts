import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { acrossLosses } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { clusterPaths } from '../job/job-paths.js';

/** A live node of the cluster (`Cluster.nodes()`). */
export interface NodeInfo {
  id: string;
  /** Where peers reach it (its transport address). */
  address: string;
  workers: number;
  /** The job it takes part in now, or null. */
  job: string | null;
  /** The job the scheduler assigned it to ('' when idle). */
  assignment: string;
}

/**
 * The live nodes of the cluster with what they run and what they are assigned to. Read again after a
 * connection loss, once the session is back (a lossy link to ZooKeeper, a leader election): a client
 * that lists the nodes before it submits does not fail for it.
 */
export function listNodes(client: CoordClient, root?: string): Promise<NodeInfo[]> {
  return acrossLosses(client, () => readNodes(client, root));
}

async function readNodes(client: CoordClient, root?: string): Promise<NodeInfo[]> {
  const p = clusterPaths(root);
  let ids: string[];
  try {
    ids = await client.getChildren(p.nodes);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
  const infos = await Promise.all(ids.map(async (id): Promise<NodeInfo | null> => {
    try {
      const meta = JSON.parse((await client.getData(joinPath(p.nodes, id))).data.toString('utf8')) as { address?: string; workers?: number; job?: string | null };
      let assignment = '';
      try {
        assignment = (await client.getData(joinPath(p.assignments, id))).data.toString('utf8');
      } catch (err) {
        if (!isCoordError(err, 'NO_NODE')) throw err;
      }
      return { id, address: meta.address ?? '', workers: meta.workers ?? 0, job: meta.job ?? null, assignment };
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) return null; // left meanwhile
      throw err;
    }
  }));
  return infos.filter((n): n is NodeInfo => n !== null).sort((a, b) => a.id.localeCompare(b.id));
}
