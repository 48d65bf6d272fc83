/**
 * The idempotent commit of seed 000's Algorithm 2, shared by the termination tracker and the
 * runtime's ledger: a multi that also creates a marker znode unique to the transaction. After a
 * connection loss the outcome is unknown; the marker tells whether it went through, so a retry can
 * never apply the same transaction twice (every attempt carries the same create).
 */
import { isCoordError, isRetryable, type CoordError } from '../errors.js';
import { existsAcrossLosses, reconnected } from '../tree-ops.js';
import type { CoordClient, Op } from '../types.js';
import type { RecipeStats } from './recipe-stats.js';

export type MarkedCommit = { committed: true } | { committed: false; refused: CoordError & { opIndex: number } };

/**
 * Commits `ops` (one of which creates `marker`) exactly once. Resolves committed — now, or by an
 * earlier attempt whose reply was lost — or with the server's refusal of one op (a version or
 * existence condition); other errors (the session ended, bad arguments) are thrown.
 */
export async function commitMarked(client: CoordClient, ops: readonly Op[], marker: string, stats: RecipeStats): Promise<MarkedCommit> {
  const markerAt = ops.findIndex((o) => o.op === 'create' && o.path === marker);
  if (markerAt < 0) throw new Error(`commitMarked: no op creates the marker ${marker}`);
  for (;;) {
    try {
      stats.writes++;
      stats.transactions++;
      await client.multi(ops);
      return { committed: true };
    } catch (err) {
      if (isRetryable(err)) {
        await reconnected(client);
        stats.reads++;
        if (await existsAcrossLosses(client, marker)) return { committed: true };
        stats.retries++;
        continue;
      }
      if (isCoordError(err) && err.opIndex !== undefined) {
        if (err.opIndex === markerAt && err.code === 'NODE_EXISTS') return { committed: true }; // an earlier attempt went through
        return { committed: false, refused: err as CoordError & { opIndex: number } };
      }
      throw err;
    }
  }
}
