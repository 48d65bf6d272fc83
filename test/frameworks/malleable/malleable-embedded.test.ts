/**
 * The malleable job kind on an embedded cluster of four nodes: shrink and expand between 1 and 4
 * nodes at sync points, requests arriving mid-iteration and two at once, a crashed node (rollback
 * to the last checkpoint, then a vacate naming it) — every run bit-identical to a plain sequential
 * solver of the same grid and iteration count.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { malleableProgress, rescaleMalleable, submitMalleable, vacateMalleable } from '../../../src/frameworks/malleable/submit.js';
import type { GridResult } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import { Cluster } from '../../../src/runtime/cluster.js';
import { jobLeader, requestJob } from '../../../src/runtime/job-control.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { plainStencil, plainWave } from './plain-grids.js';

const STENCIL = { module: new URL('../../../src/frameworks/malleable/apps/stencil2d.ts', import.meta.url).href, export: 'default' };
const WAVE = { module: new URL('../../../src/frameworks/malleable/apps/wave2d.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };

describe('malleable jobs on an embedded cluster', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await Cluster.embedded({ nodes: 4, workers: 1, progressIntervalMs: 0 });
  });
  after(async () => {
    await cluster.close();
  });

  const pausedAt = (job: string, iteration: number) =>
    waitFor(async () => (await malleableProgress(cluster.coordination, job).catch(() => undefined))?.iteration === iteration, `job at iteration ${iteration}`, 60_000);
  const objectsOn = () => new Map(cluster.localNodes().map((n) => [n.id, n.load()?.pooled ?? 0]));
  const jobs: Array<{ cancel(): Promise<boolean> }> = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.cancel().catch(() => false); // a failed test leaves no job holding nodes
  });
  const idle = () => waitFor(async () => (await cluster.nodes()).every((n) => n.job === null && n.assignment === ''), 'every node idle', 30_000);

  it('expands 2 → 4, shrinks 4 → 1 and rescales to named nodes; leaving nodes keep nothing; exact', T, async () => {
    const params = { grid: 48, blocks: 4, iterations: 60 };
    const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 2, runtime: { checkpointEvery: 10, pauseAt: [10, 30] } });
    jobs.push(job);
    await pausedAt(job.id, 10);
    const expand = await rescaleMalleable(cluster.coordination, job.id, 4);
    assert.equal(expand.kind, 'expand');
    assert.equal(expand.nodes.length, 4);
    assert.ok(expand.tRescaleMs > 0 && expand.phases.checkpoint > 0 && expand.phases.lb > 0);
    const spread = [...objectsOn().values()];
    assert.ok(spread.every((n) => n >= 1) && spread.reduce((a, b) => a + b) === 16, `16 objects over all 4 nodes: ${JSON.stringify(spread)}`);
    const leader = await jobLeader(cluster.coordination, job.id);
    const shrink = await rescaleMalleable(cluster.coordination, job.id, 1);
    assert.deepEqual(shrink, { ...shrink, kind: 'shrink', nodes: [leader] });
    await waitFor(() => cluster.localNodes().filter((n) => n.currentJob === job.id).length === 1, 'the three other nodes to leave the job');
    for (const n of cluster.localNodes()) if (n.id !== leader) assert.equal(n.load(), undefined, `${n.id} keeps nothing of the job`);
    assert.equal(objectsOn().get(leader!), 16);
    await requestJob(cluster.coordination, job.id, 'resume');
    await pausedAt(job.id, 30);
    const others = cluster.localNodes().map((n) => n.id).filter((id) => id !== leader).slice(0, 2);
    const named = await rescaleMalleable(cluster.coordination, job.id, [leader!, ...others]);
    assert.deepEqual(named.nodes, [leader!, ...others].sort());
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(48, 60, 4).checksum, 'bit-identical to the sequential run');
    assert.deepEqual(stats.rescales.map((r) => r.nodes.length), [4, 1, 3]);
    assert.equal(stats.rollbacks, 0);
    await idle();
  });

  it('serves requests arriving mid-iteration, two at once, in order; exact', T, async () => {
    const params = { grid: 40, blocks: 5, iterations: 400 };
    const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 3, runtime: { pauseAt: [399] } });
    jobs.push(job);
    await waitFor(async () => ((await malleableProgress(cluster.coordination, job.id).catch(() => undefined))?.iteration ?? 0) > 2, 'the job to run');
    const [first, second] = await Promise.all([rescaleMalleable(cluster.coordination, job.id, 2), rescaleMalleable(cluster.coordination, job.id, 4)]);
    assert.equal(first.nodes.length, 2);
    assert.equal(second.nodes.length, 4);
    assert.ok(second.iteration >= first.iteration && first.iteration > 0 && second.iteration < 400, 'both served at sync points mid-run');
    await pausedAt(job.id, 399);
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(40, 400, 5).checksum);
    await idle();
  });

  it('rolls back to the last checkpoint when a node crashes, then vacates it on request; exact', T, async () => {
    const params = { grid: 36, blocks: 4, iterations: 50 };
    const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 3, maxNodes: 3, runtime: { checkpointEvery: 10, pauseAt: [25] } });
    jobs.push(job);
    await pausedAt(job.id, 25);
    const leader = await jobLeader(cluster.coordination, job.id);
    const victim = cluster.localNodes().find((n) => n.currentJob === job.id && n.id !== leader)!.id;
    await cluster.crashNode(victim);
    const ack = await vacateMalleable(cluster.coordination, job.id, victim);
    assert.ok(!ack.nodes.includes(victim), 'the crashed node is not in the job');
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(36, 50, 4).checksum, 'bit-identical after the rollback');
    assert.ok(stats.rollbacks >= 1, 'rolled back');
    await cluster.addNodes(1);
  });

  it('a new leader takes over from the durable checkpoint when the node of the leader crashes; exact', T, async () => {
    const params = { grid: 32, blocks: 4, iterations: 40 };
    const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 3, maxNodes: 3, runtime: { checkpointEvery: 10, pauseAt: [25] } });
    jobs.push(job);
    await pausedAt(job.id, 25);
    const leader = (await jobLeader(cluster.coordination, job.id))!;
    await cluster.crashNode(leader);
    // The new leader rolls back to the checkpoint at iteration 20 and pauses at 25 again.
    await waitFor(async () => (await jobLeader(cluster.coordination, job.id)) !== leader, 'a new leader', 30_000);
    await pausedAt(job.id, 25);
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(32, 40, 4).checksum, 'bit-identical after the leader failover');
    await cluster.addNodes(1);
  });

  it('Wave2D shrinks and expands on its own schedule (application-initiated); exact', T, async () => {
    const params = { grid: 40, blocks: 4, iterations: 40 };
    const job = await submitMalleable<GridResult>(cluster, WAVE, params, { nodes: 4, runtime: { rescaleAt: [{ iteration: 10, nodes: 2 }, { iteration: 20, nodes: 4 }], strategy: 'greedy' } });
    jobs.push(job);
    const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainWave(40, 40, 4).checksum);
    assert.deepEqual(stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['shrink', 10, 2], ['expand', 20, 4]]);
    assert.deepEqual(stats.nodesPerIteration.slice(9, 12), [4, 2, 2]);
  });
});
