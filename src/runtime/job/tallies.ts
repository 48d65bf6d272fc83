/**
 * What each node did in a job — its counters when it left (tasks, splits, steals, migrations, worker time) — kept
 * under the job after the node has gone (`<job>/tallies/<node>-<seq>`), so that a client on another
 * machine can report a finished job's steals and migrations: it sees only its own nodes' events. One
 * write per node and job, removed with the job. A node killed with SIGKILL leaves no tally.
 */
import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import { watchChildren } from '../../coord/watch.js';
import { jobPaths, type JobPaths } from './job-paths.js';
import { log } from '../../util/log.js';

/** The counts of a member's work in a job that any kind may keep (the dashboard draws them for every kind). */
export interface WorkCounters {
  tasksDone: number;
  splits: number;
  stealsIn: number;
  stealsOut: number;
  migrationsIn: number;
  migrationsOut: number;
}

/** What a member did in a job, as recorded when it left: its work counters and its workers' time (ms). */
export interface JobTally extends WorkCounters {
  workerMs: number;
}

const FIELDS = ['tasksDone', 'splits', 'stealsIn', 'stealsOut', 'migrationsIn', 'migrationsOut', 'workerMs'] as const;

/** A tally with every field's value from `value`. */
function tallyOf(value: (field: keyof JobTally) => number): JobTally {
  const tally = { tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, workerMs: 0 };
  for (const k of FIELDS) tally[k] = value(k);
  return tally;
}

/** Records `node`'s counters as it leaves the job (best effort: a job already removed takes none). */
export async function recordTally(client: CoordClient, paths: JobPaths, node: string, counters: Partial<JobTally>): Promise<void> {
  const tally = tallyOf((k) => counters[k] ?? 0);
  try {
    if (!(await client.exists(paths.base))) return;
    await mkdirp(client, paths.tallies);
    await client.create(joinPath(paths.tallies, `${node}-`), Buffer.from(JSON.stringify(tally)), 'persistent_sequential');
  } catch (err) {
    if (!isCoordError(err, 'NO_NODE')) log.debug('node', `could not record the tally of ${node} in ${paths.base}`, err);
  }
}

/** The sum of the tallies recorded so far, and how many there are. */
export async function readTallies(client: CoordClient, jobId: string, root?: string): Promise<{ tallies: number; total: JobTally }> {
  const paths = jobPaths(jobId, root);
  const total = tallyOf(() => 0);
  let names: string[];
  try {
    names = await client.getChildren(paths.tallies);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) return { tallies: 0, total };
    throw err;
  }
  let tallies = 0;
  for (const name of names) {
    let tally: Partial<JobTally>;
    try {
      tally = JSON.parse((await client.getData(joinPath(paths.tallies, name))).data.toString('utf8')) as Partial<JobTally>;
    } catch {
      continue; // removed meanwhile, or not a tally
    }
    for (const k of FIELDS) if (Number.isFinite(tally[k])) total[k] += tally[k]!;
    tallies++;
  }
  return { tallies, total };
}

/**
 * The tallies of a finished job once its members have left (each writes its tally before leaving),
 * or after `timeoutMs` with whatever is there.
 */
export async function settledTallies(client: CoordClient, jobId: string, timeoutMs = 5_000, root?: string): Promise<{ tallies: number; total: JobTally }> {
  const paths = jobPaths(jobId, root);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      handle.close();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    // Its callback runs after a read, never before `handle` is assigned.
    const handle = watchChildren(client, paths.members, (members) => {
      if (!members || members.length === 0) done();
    }, { onEnd: done });
  });
  return readTallies(client, jobId, root);
}
