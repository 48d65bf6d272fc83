import { watchData } from '../../coord/watch.js';
import type { CoordClient } from '../../coord/types.js';
import { runElastic, type ElasticRunOptions, type ElasticRunStats } from '../../runtime/client/elastic-run.js';
import { jobPaths } from '../../runtime/job/job-paths.js';
import type { Application } from './applications.js';
import type { SearchResult } from './search-problem.js';
import { rootSearchState, type Incumbent } from './search-state.js';

export interface SolveOptions extends ElasticRunOptions {
  noPrune: boolean;
  /** Nodes the job starts on (default: every idle node). */
  jobNodes?: number;
  /** The job's memory budget for the tasks one node holds (JobOptions.poolMemoryBytes). */
  poolMemoryBytes?: number;
}

export interface SolveStats extends ElasticRunStats {
  searchNodes: number;
  tasks: number;
}

/** Runs one search job to completion on an elastic cluster (see runElastic) and gathers its statistics. */
export async function solveOnCluster<I>(app: Application<I>, instance: I, opts: SolveOptions): Promise<{ result: SearchResult; stats: SolveStats; jobId: string }> {
  let incumbent: number | undefined;
  const run = await runElastic(
    opts,
    (cluster) => cluster.submit(app.ref, rootSearchState(app.problem, instance), {
      input: { instance, noPrune: opts.noPrune }, ...(opts.jobNodes !== undefined ? { nodes: opts.jobNodes } : {}),
      ...(opts.poolMemoryBytes !== undefined ? { poolMemoryBytes: opts.poolMemoryBytes } : {}),
    }),
    (cluster, job) => {
      const stop = watchIncumbent(cluster.coordination, job, (v) => (incumbent = v));
      return { line: () => (incumbent !== undefined ? `  bound ${incumbent}` : ''), stop };
    },
  );
  const { outcome } = run;
  if (outcome.status !== 'done') throw new Error(outcome.status === 'failed' ? outcome.error : 'the job was cancelled');
  const result = outcome.value as SearchResult;
  return { jobId: run.jobId, result, stats: { ...run.stats, searchNodes: result.searchNodes, tasks: outcome.completions } };
}

/** Follows the value of the job's shared incumbent (the `incumbent` variable) for progress display; returns the stop. */
export function watchIncumbent(client: CoordClient, jobId: string, onValue: (v: number) => void): () => void {
  const handle = watchData(client, `${jobPaths(jobId).vars}/incumbent`, (d) => {
    if (!d) return;
    try {
      const { value } = JSON.parse(d.data.toString('utf8')) as Incumbent;
      if (typeof value === 'number') onValue(value);
    } catch {
      // Not an incumbent (written by something else): nothing to show.
    }
  });
  return () => handle.close();
}
