import { isCoordError } from '../../coord/errors.js';
import { deleteRecursive } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { collectBlobs } from '../../data/blob-directory.js';
import { decode } from '../../util/codec.js';
import { listJobs } from './job-list.js';
import { jobExists } from '../job/blob-access.js';
import { clusterPaths, jobPaths } from '../job/job-paths.js';
import type { JobOutcome } from '../job/outcome.js';

export interface RetentionOptions {
  /** Finished jobs to keep (the most recently finished). */
  keep: number;
  /** A job is removed only once it has been finished this long (ms): its nodes have left it by then. */
  graceMs?: number;
  root?: string;
  now?: number;
}

/**
 * Removes the znodes of finished jobs (spec, ledger, transaction markers, result) beyond the `keep`
 * most recently finished ones. Running jobs are never touched. Returns the ids removed.
 * A job's tree grows with its transaction markers, so a long-lived cluster needs this.
 */
export async function pruneFinishedJobs(client: CoordClient, opts: RetentionOptions): Promise<string[]> {
  const now = opts.now ?? Date.now();
  const grace = opts.graceMs ?? 60_000;
  const finished: Array<{ id: string; finishedAt: number }> = [];
  for (const id of await listJobs(client, opts.root)) {
    try {
      const outcome = decode<JobOutcome>((await client.getData(jobPaths(id, opts.root).result)).data);
      finished.push({ id, finishedAt: outcome.finishedAt });
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err; // no result: still running
    }
  }
  finished.sort((a, b) => b.finishedAt - a.finishedAt);
  const removed: string[] = [];
  for (const job of finished.slice(Math.max(0, opts.keep))) {
    if (now - job.finishedAt < grace) continue;
    await deleteRecursive(client, jobPaths(job.id, opts.root).base);
    removed.push(job.id);
  }
  // The blobs of removed jobs (inputs, states, results, code) go with them: references of jobs that
  // no longer exist are dropped, then blobs nobody references; each node deletes its copies later.
  if (removed.length > 0) await collectBlobs(client, { root: clusterPaths(opts.root).root, jobExists: (id) => jobExists(client, id, opts.root) });
  return removed;
}
