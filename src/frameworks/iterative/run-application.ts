/**
 * Runs an iterative job — one of the built-in applications or a user's module — with progress: on an
 * embedded cluster, or on the cluster registered at a ZooKeeper ensemble with local node processes
 * joining for the run (runElastic). About twice a second the job's leader is asked for every node's
 * figures (iterations done, speeds), from which the progress line predicts the time left.
 */
import { runElastic } from '../../runtime/client/elastic-run.js';
import { requestJob } from '../../runtime/client/job-requests.js';
import type { Cluster } from '../../runtime/client/cluster.js';
import type { TaskRef } from '../../runtime/worker/task.js';
import type { NodeFigures } from './figures.js';
import type { BlockTally, IterativeResult } from './iterative-types.js';
import { progressLine } from './progress-line.js';
import { iterativeInput, iterativeResult, submitIterative, type IterativeOptions } from './run-iterative.js';

export interface IterativeRunOptions {
  ref: TaskRef;
  options: IterativeOptions<unknown>;
  /** What an iteration is called in the progress line (histories, paths, iterations). */
  unit: string;
  /** Embedded nodes to start, or with `zk` local node processes that join the cluster for this run. */
  nodes: number;
  workers: number;
  /** Run on the cluster registered at this ZooKeeper connection string. */
  zk?: string;
  /** With `zk`: the cluster secret's file for the local node processes (else $TIDEPOOL_SECRET). */
  secretFile?: string;
  /** Run on this cluster (owned by the caller, left running) instead of starting one. */
  cluster?: Cluster;
  /** Nodes the job asks for (default: `nodes` on an embedded cluster, every idle node with `zk`). */
  jobNodes?: number;
  onProgress?: (line: string) => void;
}

export async function runIterativeJob(opts: IterativeRunOptions): Promise<{ result: IterativeResult<unknown>; seconds: number }> {
  const input = iterativeInput(opts.options);
  const jobNodes = opts.jobNodes ?? (opts.zk ? undefined : opts.nodes);
  const run = await runElastic(
    {
      nodes: opts.nodes, workers: opts.workers, schedule: [],
      ...(opts.zk ? { zk: opts.zk } : {}), ...(opts.secretFile !== undefined ? { secretFile: opts.secretFile } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}), ...(opts.cluster ? { cluster: opts.cluster } : {}),
    },
    (cluster) => submitIterative(cluster, opts.ref, { ...opts.options, ...(jobNodes !== undefined ? { nodes: jobNodes } : {}) }),
    (cluster, job) => progressOf(cluster, job, input.iterations, opts.unit),
  );
  if (run.outcome.status !== 'done') throw new Error(run.outcome.status === 'failed' ? run.outcome.error : 'the job was cancelled');
  return { result: iterativeResult(input, run.outcome.value as BlockTally<unknown>), seconds: run.stats.seconds };
}

/** Follows the job's figures about twice a second; `line()` is the latest progress bar (see progressLine). */
function progressOf(cluster: Cluster, job: string, total: number, unit: string): { line(): string; stop(): void } {
  let line = '';
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      try {
        line = progressLine((await requestJob(cluster.coordination, job, 'figures', null, { timeoutMs: 2000 })) as NodeFigures[], total, unit);
      } catch {
        // The job may be starting or ending: keep the last line.
      }
      await new Promise((r) => setTimeout(r, 500).unref?.());
    }
  };
  void poll();
  return { line: () => line, stop: () => void (stopped = true) };
}
