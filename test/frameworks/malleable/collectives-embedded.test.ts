/**
 * Collectives and evolving jobs on an embedded cluster of four nodes: an application coupled through
 * sum, min, max, a custom fold and broadcasts gives bit for bit the plain loops' reductions and values
 * on 1, 2 and 3 nodes and across a shrink and an expand with periodic balancing; a convergence test
 * ends it where the plain loops stop; an application that asks for a node range (`requestResize`)
 * without a resource manager is shrunk and expanded into it at the next sync point.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { submitMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import type { DecayParams, DecayResult } from './apps/coupled-decay.js';
import { assertBitIdentical, plainDecay } from './plain-decay.js';

const DECAY = { module: new URL('./apps/coupled-decay.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };

describe('collectives on an embedded cluster', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await Cluster.embedded({ nodes: 4, workers: 1, progressIntervalMs: 0 });
  });
  after(async () => {
    await cluster.close();
  });
  const jobs: Array<{ cancel(): Promise<boolean> }> = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.cancel().catch(() => false);
    await waitFor(async () => (await cluster.nodes()).every((n) => n.job === null && n.assignment === ''), 'every node idle', 30_000);
  });
  const run = async (params: DecayParams, nodes: number, runtime = {}) => {
    const job = await submitMalleable<DecayResult>(cluster, DECAY, params, { nodes, maxNodes: 4, runtime });
    jobs.push(job);
    return withDeadline(job.result(), 'the result', 60_000);
  };

  it('reductions and broadcasts are bit-identical to the plain loops on 1, 2 and 3 nodes', T, async () => {
    const params = { objects: 7, width: 5, iterations: 20 };
    const want = plainDecay(params);
    for (const nodes of [1, 2, 3]) {
      const { result, stats } = await run(params, nodes);
      assertBitIdentical(result, want, `${nodes} node(s)`);
      assert.ok(stats.nodesPerIteration.every((n) => n === nodes), `ran on ${nodes} node(s): ${JSON.stringify(stats.nodesPerIteration)}`);
    }
  });

  it('are bit-identical across a shrink 3 → 2 and an expand 2 → 3 with balancing every 4 iterations, and a convergence test stops where the plain loops do', T, async () => {
    const params = { objects: 7, width: 5, iterations: 300, tol: 1e-10 };
    const want = plainDecay(params);
    assert.ok(want.steps > 30, `converges after the rescales (${want.steps} iterations)`);
    const { result, stats } = await run(params, 3, { lbEvery: 4, rescaleAt: [{ iteration: 10, nodes: 2 }, { iteration: 20, nodes: 3 }] });
    assertBitIdentical(result, want, 'shrink and expand');
    assert.deepEqual(stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['shrink', 10, 2], ['expand', 20, 3]]);
    assert.equal(stats.iterations, want.steps);
  });

  it('an evolving job without a resource manager is rescaled into the node range it asks for', T, async () => {
    const params = { objects: 6, width: 3, iterations: 40, resizeAt: [{ iteration: 7, min: 1, max: 2 }, { iteration: 19, min: 3, max: 4 }] };
    const { result, stats } = await run(params, 4);
    assertBitIdentical(result, plainDecay(params), 'evolving');
    assert.deepEqual(stats.resizeRequests, [{ iteration: 7, min: 1, max: 2 }, { iteration: 19, min: 3, max: 4 }]);
    // Each request is served at the next sync point: after iteration 7 the job runs on 2 nodes, after 19 on 3.
    assert.deepEqual(stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['shrink', 8, 2], ['expand', 20, 3]]);
    assert.deepEqual([stats.nodesPerIteration[7], stats.nodesPerIteration[8], stats.nodesPerIteration[19], stats.nodesPerIteration[20]], [4, 2, 2, 3]);
  });
});
