import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { countSequentially } from './apps/compositions.js';
import { rootState } from './apps/compositions.js';
import { waitFor } from '../support/wait.js';

const COMPOSITIONS: TaskRef = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };

describe('embedded cluster: exact counts', () => {
  it('sequential reference equals the closed form 2^n', () => {
    for (let n = 1; n <= 16; n++) assert.equal(countSequentially(n), 2 ** n);
  });

  it('reports progress events while a job runs, with the final counters when a node leaves it', { timeout: 60_000 }, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 8, progressIntervalMs: 20 });
    const progress: Array<{ node: string; tasksDone: number }> = [];
    cluster.on((e) => e.type === 'progress' && progress.push(e));
    try {
      const job = await cluster.submit(COMPOSITIONS, rootState(18, 50));
      await job.result();
      await waitFor(() => cluster.localNodes().every((n) => n.currentJob === undefined), 'nodes to leave the finished job');
      const final = new Map(progress.map((p) => [p.node, p.tasksDone]));
      assert.equal(final.size, 2, 'both nodes reported');
      assert.ok([...final.values()].reduce((a, b) => a + b, 0) >= 1, 'completed tasks are counted');
    } finally {
      await cluster.close();
    }
  });

  for (const [nodes, workers] of [[1, 1], [1, 2], [2, 1], [4, 1]] as const) {
    it(`${nodes} node(s) × ${workers} worker(s) count 2^18 nodes exactly`, { timeout: 60_000 }, async () => {
      const cluster = await Cluster.embedded({ nodes, workers, seed: 7 });
      try {
        const job = await cluster.submit(COMPOSITIONS, rootState(18, 20));
        const outcome = await job.outcome();
        assert.equal(outcome.status, 'done', JSON.stringify(outcome));
        assert.equal(await job.result<number>(), 2 ** 18);
      } finally {
        await cluster.close();
      }
    });
  }
});
