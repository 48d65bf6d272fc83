import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import type { CoordClient, Op } from '../../coord/types.js';
import { schedulerPaths } from './scheduler-paths.js';
import { readOrNull } from '../../coord/znode-reads.js';

export interface NodeMove {
  node: string;
  /** The job the node is expected to hold now ('' idle). */
  from: string;
  /** '' releases the node (it leaves its job; a task-pool member drains). */
  to: string;
}

/**
 * Writes node moves decided outside the reconciler (a resource manager's): every assignment at the
 * version read, in one multi that also bumps the scheduler epoch, so a core reconciler planning at
 * the same time re-plans, and a node is never written from a state the deciding side did not see. A node given to a job must be live. Returns
 * the moves that could not be made (the node is gone, or holds a job the mover did not expect).
 * A node still naming one of the `ended` jobs counts as idle (it clears that itself when it has left).
 */
export async function moveNodes(client: CoordClient, moves: readonly NodeMove[], root?: string, ended: ReadonlySet<string> = new Set()): Promise<NodeMove[]> {
  const p = schedulerPaths(root);
  const gone = new Set<string>();
  for (let attempt = 0; attempt < 20; attempt++) {
    const failed: NodeMove[] = moves.filter((m) => gone.has(m.node));
    const ops: Op[] = [{ op: 'setData', path: p.epoch, data: Buffer.alloc(0) }];
    const checked: string[] = [];
    for (const m of moves) {
      if (gone.has(m.node)) continue;
      const read = await readOrNull(client, joinPath(p.assignments, m.node));
      const named = read?.data.toString('utf8');
      const holder = named !== undefined && ended.has(named) ? '' : named;
      if (!read || (holder !== m.from && holder !== m.to)) {
        failed.push(m);
        continue;
      }
      if (holder === m.to) continue;
      if (m.to !== '') {
        checked[ops.length] = m.node;
        ops.push({ op: 'check', path: joinPath(p.nodes, m.node), version: -1 });
      }
      ops.push({ op: 'setData', path: joinPath(p.assignments, m.node), data: Buffer.from(m.to), version: read.stat.version });
    }
    if (ops.length === 1) return failed;
    try {
      await client.multi(ops);
      return failed;
    } catch (err) {
      if (!isCoordError(err, 'BAD_VERSION', 'NO_NODE')) throw err;
      const dead = err.opIndex !== undefined ? checked[err.opIndex] : undefined;
      if (isCoordError(err, 'NO_NODE') && dead !== undefined) gone.add(dead); // not live: leave it out
      // else something moved meanwhile: read again
    }
  }
  throw new Error(`could not move nodes ${moves.map((m) => m.node).join(' ')}: the cluster kept changing`);
}
