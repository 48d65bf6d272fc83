/**
 * Runs one of the iterative applications on an embedded cluster with progress: about once a second
 * the job's leader is asked for every node's figures (iterations done, speeds), from which the
 * progress line predicts the time left.
 */
import { runElastic } from '../../runtime/client/elastic-run.js';
import { requestJob } from '../../runtime/job-control.js';
import type { Cluster } from '../../runtime/cluster.js';
import type { Answer, IterativeApplication } from './apps/applications.js';
import type { NodeFigures } from './figures.js';
import type { BalanceStrategy } from './iterative-types.js';
import { progressLine } from './progress-line.js';
import { submitIterative } from './run-iterative.js';

export interface ApplicationRun {
  iterations: number;
  tally: unknown;
  answer: Answer;
  seconds: number;
}

export async function runIterativeApplication(
  app: IterativeApplication,
  opts: {
    iterations: number; nodes: number; workers: number; seed: number; balance: BalanceStrategy; onProgress?: (line: string) => void;
    /** Run on this embedded cluster of `nodes` nodes (owned by the caller, left running) instead of starting one. */
    cluster?: Cluster;
  },
): Promise<ApplicationRun> {
  const run = await runElastic(
    { nodes: opts.nodes, workers: opts.workers, schedule: [], ...(opts.onProgress ? { onProgress: opts.onProgress } : {}), ...(opts.cluster ? { cluster: opts.cluster } : {}) },
    (cluster) => submitIterative(cluster, app.ref, { iterations: opts.iterations, params: app.params, seed: opts.seed, balance: opts.balance, nodes: opts.nodes }),
    (cluster, job) => progressOf(cluster, job, opts.iterations, app.unit),
  );
  if (run.outcome.status !== 'done') throw new Error(run.outcome.status === 'failed' ? run.outcome.error : 'the job was cancelled');
  const r = run.outcome.value as { n: number; v: unknown };
  return { iterations: r.n, tally: r.v, answer: app.answer(app.params, r.v), seconds: run.stats.seconds };
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
