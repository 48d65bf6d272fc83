/**
 * Elastic behaviour on an embedded cluster: nodes join and drain mid-run, and nodes (the job
 * leader included) are killed mid-run. The count must stay exact: nothing lost, nothing doubled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster, type ClusterEvent } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { Rng } from '../../src/util/rng.js';
import { testSeeds } from '../support/seeds.js';
import { withDeadline, waitFor } from '../support/wait.js';
import { rootState } from './apps/compositions.js';

const COMPOSITIONS: TaskRef = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
const N = 22;
const WORK = 400; // arithmetic per tree node: a run of a few seconds on one worker
const T = { timeout: 120_000 };

function record(cluster: Cluster): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  cluster.on((e) => events.push(e));
  return events;
}

describe('embedded cluster: elasticity and failures', () => {
  it('nodes join mid-run, start stealing at once, and drain out again: exact count', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1, seed: 11 });
    const events = record(cluster);
    try {
      const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK), { nodes: 1 });
      // Once the job is running on its first node, add two nodes and give them to the job.
      await waitFor(() => events.some((e) => e.type === 'leader'), 'the job to start');
      const added = await cluster.addNodes(2);
      await cluster.scale(job.id, 3);
      await waitFor(() => added.every((id) => events.some((e) => e.type === 'steal' && e.to === id)), 'both new nodes to steal work');
      // Then shrink back to one node: the two released nodes migrate their tasks away.
      const { released } = await cluster.scale(job.id, 1);
      assert.equal(released.length, 2);
      const outcome = await withDeadline(job.outcome(), 'job outcome', 100_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.equal(await job.result<number>(), 2 ** N);
      for (const id of released) assert.ok(events.some((e) => e.type === 'job-left' && e.node === id && e.reason === 'drained'), `${id} drained`);
      assert.ok(events.some((e) => e.type === 'migration'), 'tasks migrated off the drained nodes');
    } finally {
      await cluster.close();
    }
  });

  for (const seed of testSeeds([21, 22, 23, 24])) {
  it(`a node is killed mid-run (no drain): its tasks are recovered, count exact (seed ${seed})`, T, async () => {
    const rng = new Rng(seed);
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed });
    const events = record(cluster);
    try {
      const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK));
      const leader = await withDeadline(new Promise<string>((resolve) => {
        const e = events.find((x) => x.type === 'leader');
        if (e && e.type === 'leader') return resolve(e.node);
        const off = cluster.on((x) => { if (x.type === 'leader') { off(); resolve(x.node); } });
      }), 'a leader');
      // Kill a non-leader once it holds stolen work, after a random number of steals.
      const steals = rng.int(1, 4);
      await waitFor(() => events.filter((e) => e.type === 'steal' && e.to !== leader).length >= steals, `${steals} steals by non-leaders`, 60_000);
      const victim = events.filter((e) => e.type === 'steal' && e.to !== leader).at(-1) as { to: string };
      await cluster.crashNode(victim.to);
      const outcome = await withDeadline(job.outcome(), 'job outcome', 100_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.equal(await job.result<number>(), 2 ** N);
    } finally {
      await cluster.close();
    }
  });
  }

  for (const seed of testSeeds([31, 32, 33, 34])) {
  it(`the job leader (coordinator) is killed mid-run: another takes over, one result, count exact (seed ${seed})`, T, async () => {
    const rng = new Rng(seed);
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed });
    const events = record(cluster);
    try {
      // A larger tree, and the kill early in it, so that the job is surely still running when its leader dies.
      const job = await cluster.submit(COMPOSITIONS, rootState(N + 1, WORK));
      const steals = rng.int(2, 4);
      await waitFor(() => events.filter((e) => e.type === 'steal').length >= steals, `${steals} steals`, 60_000);
      const leader = (events.find((e) => e.type === 'leader') as { node: string }).node;
      const over = await Promise.race([job.outcome().then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
      assert.equal(over, false, 'the job is still running when its leader is killed');
      await cluster.crashNode(leader);
      await waitFor(() => events.some((e) => e.type === 'leader' && e.node !== leader), 'a new leader', 30_000).catch((err: unknown) => {
        const tail = events.slice(-12).map((e) => JSON.stringify(e)).join('\n');
        throw new Error(`${(err as Error).message}; last events:\n${tail}`);
      });
      const outcome = await withDeadline(job.outcome(), 'job outcome', 100_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.equal(await job.result<number>(), 2 ** (N + 1));
      assert.equal(events.filter((e) => e.type === 'leader').length, 2, 'exactly one takeover');
    } finally {
      await cluster.close();
    }
  });
  }
});
