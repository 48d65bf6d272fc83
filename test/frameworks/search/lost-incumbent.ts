/**
 * Scenario of lost-incumbent-*.test.ts: the run that found a branch-and-bound's optimum published it as the
 * job's incumbent, then its node died before the task's completion was written. The task is recovered and run
 * again from its last checkpoint, now under a bound equal to the optimum, which prunes it and keeps the re-run
 * from recording that solution again; the job must still answer with the optimum and its solution (taken
 * from the incumbent variable, where it was published with its value), and count every search node once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterReader } from '../../../src/dashboard/cluster-reader.js';
import type { SearchResult } from '../../../src/frameworks/search/search-problem.js';
import { rootSearchState, type Incumbent } from '../../../src/frameworks/search/search-state.js';
import type { Cluster } from '../../../src/runtime/client/cluster.js';
import { taskOwners } from '../../support/ledger-probes.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { heldOptimum, LEAVES, OPTIMUM } from './apps/held-optimum.js';

const HELD_OPTIMUM: TaskRef = { module: new URL('./apps/held-optimum.ts', import.meta.url).href, export: 'default' };

/** Runs the scenario on a cluster of two single-worker nodes; `kill` ends a node as a crash does (no goodbye). */
export async function optimumFoundByALostRun(cluster: Cluster, kill: (nodeId: string) => Promise<void>): Promise<void> {
  const gate = mkdtempSync(join(tmpdir(), 'tidepool-held-optimum-'));
  try {
    const instance = { gate };
    const job = await cluster.submit(HELD_OPTIMUM, rootSearchState(heldOptimum, instance), { input: { instance, noPrune: false }, nodes: 2 });
    await waitFor(() => existsSync(join(gate, 'held')), 'the run that found the optimum to hold', 60_000);
    const incumbentPath = `${jobPaths(job.id).vars}/incumbent`;
    await waitFor(async () => {
      const data = await cluster.coordination.getData(incumbentPath).catch(() => null);
      return data !== null && (JSON.parse(data.data.toString('utf8')) as Incumbent).value === OPTIMUM;
    }, 'the optimum to be the job\'s incumbent');
    // The dashboard shows the incumbent as its number.
    const reading = await new ClusterReader(cluster.coordination).read();
    assert.deepEqual(reading.jobs.find((j) => j.id === job.id)?.vars, { incumbent: OPTIMUM });
    // Every other task is over: the holding run's node is the only owner left.
    let owners = new Map<string, number>();
    await waitFor(async () => (owners = await taskOwners(cluster.coordination, job.id)).size === 1, 'one task left, held');
    await kill([...owners.keys()][0]!);
    const outcome = await withDeadline(job.outcome(), 'the job to end', 90_000);
    assert.equal(outcome.status, 'done', JSON.stringify(outcome));
    const result = (outcome as { value: SearchResult }).value;
    assert.deepEqual({ value: result.value, solution: result.solution }, { value: OPTIMUM, solution: 'opt' }, 'the optimum its lost run published');
    assert.equal(result.searchNodes, 1 + LEAVES, 'the root and every leaf counted once');
  } finally {
    rmSync(gate, { recursive: true, force: true });
  }
}
