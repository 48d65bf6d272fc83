/**
 * The secret of the node processes a command starts for itself on a ZooKeeper cluster (`solve --zk
 * --nodes N`, `iterate --zk --nodes N`): the user's, or a fresh one only where no other node could
 * need the cluster's.
 */
import { isCoordError } from '../coord/errors.js';
import { clusterPaths } from '../runtime/job/job-paths.js';
import { withZk } from './connection.js';
import { UsageError } from './errors.js';
import { secretForLocalNodes } from './options.js';

/**
 * Sets up the local node processes' secret (see secretForLocalNodes). Local node processes with a
 * fresh secret cannot authenticate to nodes already registered (each cluster shares one secret), and
 * the job would take those nodes too: then the cluster's secret is asked for instead.
 */
export async function secretForLocalNodesOn(zk: string, secretFile: string | undefined, timeoutMs: number): Promise<void> {
  if (secretForLocalNodes(secretFile) !== 'fresh') return;
  await withZk(zk, timeoutMs, undefined, async (client) => {
    const nodes = await client.getChildren(clusterPaths().nodes).catch((err: unknown) => {
      if (isCoordError(err, 'NO_NODE')) return [];
      if (isCoordError(err, 'NO_AUTH')) throw new UsageError(`${zk} holds a cluster secured by its own secret: --secret-file (or TIDEPOOL_SECRET) is needed to run on it`);
      throw err;
    });
    if (nodes.length > 0) {
      throw new UsageError(`${zk} already has ${nodes.length} node(s), which use the cluster's secret: --secret-file (or TIDEPOOL_SECRET) is needed to start local node processes with --zk`);
    }
  });
}
