/**
 * Test support: what a task-pool job's ledger says about where its work is (read from the
 * coordination service, as a test on another machine than the nodes would).
 */
import { isCoordError } from '../../src/coord/errors.js';
import { joinPath } from '../../src/coord/paths.js';
import type { CoordClient } from '../../src/coord/types.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { decode } from '../../src/util/codec.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';

/** The data of every child of `dir` (children that vanish meanwhile are skipped; a missing dir is empty). */
async function childData(client: CoordClient, dir: string): Promise<Buffer[]> {
  let ids: string[];
  try {
    ids = await client.getChildren(dir);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return [];
    throw err;
  }
  const out: Buffer[] = [];
  for (const id of ids) {
    try {
      out.push((await client.getData(joinPath(dir, id))).data);
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
  }
  return out;
}

/** Owners of the job's live tasks, by node id (for status displays and tests). */
export async function taskOwners(client: CoordClient, jobId: string, root?: string): Promise<Map<string, number>> {
  const owners = new Map<string, number>();
  for (const data of await childData(client, ledgerPaths(jobPaths(jobId, root)).tasks)) {
    const { owner } = decode<TaskRecord>(data);
    owners.set(owner, (owners.get(owner) ?? 0) + 1);
  }
  return owners;
}

/** Nodes that have committed ledger transactions for the job (splits, claims, completions). */
export async function jobCommitters(client: CoordClient, jobId: string, root?: string): Promise<Set<string>> {
  return new Set((await childData(client, ledgerPaths(jobPaths(jobId, root)).txns)).map((d) => decode<{ node: string }>(d).node));
}
