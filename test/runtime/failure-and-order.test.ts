/**
 * Failure policies and reproducible results on an embedded cluster: retries resume a failed task
 * (the job stays exact), the collect policy completes the job and names the failed tasks, and an
 * ordered result is bit-identical to the sequential fold in key order whatever the nodes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { withDeadline } from '../support/wait.js';
import { blockValue } from './apps/failure-policies.js';

const ref = (name: string): TaskRef => ({ module: new URL('./apps/failure-policies.ts', import.meta.url).href, export: name });
const T = { timeout: 90_000 };
const LEAVES = 40;
const sumOf = (keep: (i: number) => boolean) => Array.from({ length: LEAVES }, (_, i) => i).filter(keep).reduce((a, b) => a + b, 0);

describe('failure policies and ordered results', () => {
  it('retries: a task that fails once runs again and the job is exact; without retries the job fails', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 31 });
    try {
      const ok = await cluster.submit(ref('flaky'), { index: -1, leaves: LEAVES, fan: true });
      assert.equal(await withDeadline(ok.result<number>(), 'the result', 60_000), sumOf(() => true));
      const failing = await cluster.submit(ref('flakyNoRetries'), { index: -1, leaves: LEAVES, fan: true });
      const outcome = await withDeadline(failing.outcome(), 'the outcome', 60_000);
      assert.equal(outcome.status, 'failed');
      if (outcome.status === 'failed') assert.match(outcome.error, /task \S+ failed: leaf \d+ fails once/);
    } finally {
      await cluster.close();
    }
  });

  it("failures: 'collect' completes the job with the others' sum and lists every failed task", T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 32 });
    try {
      const job = await cluster.submit(ref('collecting'), { index: -1, leaves: LEAVES, fan: true });
      const outcome = await withDeadline(job.outcome(), 'the outcome', 60_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      if (outcome.status !== 'done') return;
      assert.equal(outcome.value, sumOf((i) => i % 7 !== 0));
      const failed = outcome.failures ?? [];
      const multiples = Array.from({ length: LEAVES }, (_, i) => i).filter((i) => i % 7 === 0);
      assert.deepEqual(failed.map((f) => Number(/leaf (\d+)/.exec(f.error)?.[1])).sort((a, b) => a - b), multiples);
      assert.equal(new Set(failed.map((f) => f.task)).size, multiples.length, 'each failed task listed once, by id');
    } finally {
      await cluster.close();
    }
  });

  it('an ordered result is bit-identical to the sequential fold in key order, on 1 or 3 nodes', T, async () => {
    const blocks = 3_000;
    let sequential = 0;
    for (let i = 0; i < blocks; i++) sequential += blockValue(i);
    for (const nodes of [1, 3]) {
      const cluster = await Cluster.embedded({ nodes, workers: 1, seed: 40 + nodes });
      try {
        const job = await cluster.submit(ref('orderedFloats'), { lo: 0, hi: blocks });
        const value = await withDeadline(job.result<number>(), 'the result', 60_000);
        assert.ok(Object.is(value, sequential), `on ${nodes} node(s): ${value} is the sequential ${sequential}`);
      } finally {
        await cluster.close();
      }
    }
    // The check has teeth: folding the same values in another order changes the last bits.
    let reversed = 0;
    for (let i = blocks - 1; i >= 0; i--) reversed += blockValue(i);
    assert.notEqual(reversed, sequential, 'these values are order-sensitive');
  });
});
