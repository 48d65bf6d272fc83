/**
 * Job tallies: each node writes its counters under the job as it leaves, so a client that sees none
 * of the nodes' events (another machine) can report a finished job's steals and migrations. Checked
 * against the events an embedded cluster does show: every member leaves one tally, the steals and
 * migrations they sum to are the ones the events reported, and the tasks they ran are the job's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster, type ClusterEvent } from '../../src/runtime/client/cluster.js';
import { runElastic } from '../../src/runtime/client/elastic-run.js';
import { readTallies, settledTallies } from '../../src/runtime/job/tallies.js';
import { withDeadline } from '../support/wait.js';
import { rootState } from './apps/compositions.js';

const TIMED = { module: new URL('./apps/timed-fan.ts', import.meta.url).href, export: 'default' };
const APP = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };

describe('job tallies', () => {
  it('one tally per member; their sums are the steals, migrations and tasks the events showed', { timeout: 120_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 9, progressIntervalMs: 0 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    try {
      const job = await cluster.submit(APP, rootState(19, 200), { nodes: 3 });
      assert.deepEqual(await readTallies(cluster.coordination, job.id), { tallies: 0, total: { tasksDone: 0, splits: 0, stealsIn: 0, stealsOut: 0, migrationsIn: 0, migrationsOut: 0, workerMs: 0 } }, 'none while the job runs');
      const joined = new Set<string>();
      const outcome = await withDeadline(job.outcome(), 'the outcome', 100_000);
      assert.equal(outcome.status, 'done');
      const { tallies, total } = await settledTallies(cluster.coordination, job.id, 30_000);
      for (const e of events) if (e.type === 'job-joined' && e.job === job.id) joined.add(e.node);
      assert.equal(tallies, joined.size, 'a tally from every node that joined');
      const of = (type: string) => events.filter((e) => e.type === type && (e as { job?: string }).job === job.id).length;
      assert.ok(of('steal') > 0, 'the job was stolen from (three nodes, one root)');
      assert.equal(total.stealsOut, of('steal'));
      assert.equal(total.stealsIn, of('steal'), 'every steal arrived');
      assert.equal(total.migrationsOut, of('migration'));
      if (outcome.status === 'done') assert.equal(total.tasksDone, outcome.completions, 'the members ran the job\'s tasks, each once');
    } finally {
      await cluster.close();
    }
  });

  it('the workers\' time: at least what the tasks kept them busy, at most workers × the run', { timeout: 120_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 3, progressIntervalMs: 0 });
    try {
      const began = performance.now();
      const run = await runElastic({ cluster, nodes: 2, workers: 1, schedule: [] }, (c) => c.submit(TIMED, { fanout: 12, ms: 40, root: true }, { nodes: 2 }));
      const wallSeconds = (performance.now() - began) / 1000;
      assert.equal(run.outcome.status, 'done');
      if (run.outcome.status === 'done') assert.equal(run.outcome.value, 13, 'the root and its 12 tasks, each once');
      const worker = run.stats.workerSeconds;
      assert.ok(worker !== undefined, 'the run reports its workers\' time');
      assert.ok(worker >= 12 * 0.04, `12 tasks of 40 ms kept the workers busy ${worker.toFixed(3)} s`);
      assert.ok(worker <= 2 * wallSeconds, `2 workers cannot be busy ${worker.toFixed(3)} s in a ${wallSeconds.toFixed(3)} s run`);
      const { total } = await readTallies(cluster.coordination, run.jobId);
      assert.equal(total.workerMs / 1000, worker, 'the run\'s figure is the tallies\' sum');
    } finally {
      await cluster.close();
    }
  });
});
