/**
 * The malleable job kind on an embedded cluster of four nodes: shrink and expand between 1 and 4
 * nodes at sync points, requests arriving mid-iteration and two before one sync point, a crashed
 * node (rollback to the last checkpoint, then a vacate naming it), superseded checkpoints discarded
 * from the data plane — every run bit-identical to a plain sequential solver of the same grid and
 * iteration count.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { malleableProgress, rescaleMalleable, submitMalleable, vacateMalleable } from '../../../src/frameworks/malleable/submit.js';
import type { GridResult } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import type { MalleableState } from '../../../src/frameworks/malleable/durable-state.js';
import { joinPath } from '../../../src/coord/paths.js';
import { decode } from '../../../src/util/codec.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { clusterPaths, jobPaths } from '../../../src/runtime/job/job-paths.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
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
  const blobs = joinPath(clusterPaths().root, 'blobs');
  /** Blobs the job's checkpoints reference in the data plane's directory. */
  const checkpointBlobs = async (job: string) => {
    const hashes = await cluster.coordination.getChildren(blobs).catch(() => [] as string[]);
    const used = await Promise.all(hashes.map(async (h) => (await cluster.coordination.getChildren(joinPath(blobs, h, 'refs')).catch(() => [] as string[])).some((r) => r.startsWith(`${job}~ckpt.`))));
    return hashes.filter((_, i) => used[i]).sort();
  };
  /** None of these blobs has an entry in the directory any more. */
  const goneFromDirectory = async (hashes: string[]) => (await Promise.all(hashes.map((h) => cluster.coordination.exists(joinPath(blobs, h))))).every((s) => s === null);
  /** The parts of the job's committed checkpoint. */
  const committedBlobs = async (job: string) =>
    decode<MalleableState>((await cluster.coordination.getData(joinPath(jobPaths(job).base, 'malleable'))).data).manifest!.parts.map((p) => p.ref.hash).sort();

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
    // Four checkpoints so far (the expand and the shrink at 10, 20, the named rescale at 30): only the last is still referenced.
    const committed = await committedBlobs(job.id);
    assert.equal(committed.length, 3);
    await waitFor(async () => JSON.stringify(await checkpointBlobs(job.id)) === JSON.stringify(committed), 'superseded checkpoints to be discarded', 30_000);
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(48, 60, 4).checksum, 'bit-identical to the sequential run');
    assert.deepEqual(stats.rescales.map((r) => r.nodes.length), [4, 1, 3]);
    assert.equal(stats.rollbacks, 0);
    assert.ok(stats.checkpoints >= 6, `checkpoints taken: ${stats.checkpoints}`);
    // Once the result is written no checkpoint is needed: none is referenced, and no store keeps one after its collection.
    const last = await committedBlobs(job.id);
    await waitFor(async () => (await checkpointBlobs(job.id)).length === 0 && (await goneFromDirectory([...committed, ...last])), 'the last checkpoint to be discarded', 30_000);
    await Promise.all(cluster.localNodes().map((n) => n.data!.collectLocal()));
    for (const n of cluster.localNodes()) for (const h of [...committed, ...last]) assert.equal(n.data!.store.has(h), false, `${n.id} keeps no checkpoint`);
    await idle();
  });

  it('serves a request arriving mid-iteration; two requests before one sync point both at that sync point, in order; exact', T, async () => {
    const params = { grid: 40, blocks: 5, iterations: 60 };
    const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 3, runtime: { pauseAt: [30] } });
    jobs.push(job);
    // Mid-run: the job is iterating when the request arrives; it is served at the next sync point.
    await waitFor(async () => ((await malleableProgress(cluster.coordination, job.id).catch(() => undefined))?.iteration ?? 0) > 2, 'the job to run');
    const midRun = await rescaleMalleable(cluster.coordination, job.id, 2);
    assert.ok(midRun.iteration > 2 && midRun.iteration <= 30, `served at a sync point mid-run (iteration ${midRun.iteration})`);
    const onTwo = await committedBlobs(job.id); // two parts, each held by both nodes
    assert.equal(onTwo.length, 2);
    // Two requests while the job waits at iteration 30: both are served at that one sync point, in order.
    await pausedAt(job.id, 30);
    const [first, second] = await Promise.all([rescaleMalleable(cluster.coordination, job.id, 1), rescaleMalleable(cluster.coordination, job.id, 4)]);
    assert.deepEqual([first.kind, first.nodes.length, first.iteration], ['shrink', 1, 30]);
    assert.deepEqual([second.kind, second.nodes.length, second.iteration], ['expand', 4, 30]);
    // Superseded by the shrink's checkpoint and discarded; every member dropped its copies when it stored its part of the expand's.
    await waitFor(() => cluster.localNodes().every((n) => onTwo.every((h) => !n.data!.store.has(h))), 'the copies of the discarded checkpoint to go', 20_000);
    await requestJob(cluster.coordination, job.id, 'resume');
    const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
    assert.equal(result.checksum, plainStencil(40, 60, 5).checksum, 'bit-identical to the sequential run');
    assert.deepEqual(stats.nodesPerIteration.slice(29, 31), [midRun.iteration <= 29 ? 2 : 3, 4], 'iteration 30 ran on the 4 nodes of the second request');
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

  it('a rescale that lets the leader\'s own node go: the next leader goes on from that checkpoint without a rollback (3 times); exact', T, async () => {
    const params = { grid: 32, blocks: 4, iterations: 30 };
    for (let round = 0; round < 3; round++) {
      await idle();
      const job = await submitMalleable<GridResult>(cluster, STENCIL, params, { nodes: 3, maxNodes: 3, runtime: { checkpointEvery: 10, pauseAt: [12] } });
      jobs.push(job);
      await pausedAt(job.id, 12);
      const leader = (await jobLeader(cluster.coordination, job.id))!;
      const kept = cluster.localNodes().filter((n) => n.currentJob === job.id && n.id !== leader).map((n) => n.id).sort();
      const ack = await rescaleMalleable(cluster.coordination, job.id, kept);
      assert.deepEqual(ack.nodes, kept);
      await waitFor(async () => { const l = await jobLeader(cluster.coordination, job.id); return l !== null && l !== leader; }, 'a new leader', 30_000);
      await requestJob(cluster.coordination, job.id, 'resume');
      const { result, stats } = await withDeadline(job.result(), 'the result', 60_000);
      assert.equal(result.checksum, plainStencil(32, 30, 4).checksum, `round ${round}: bit-identical`);
      // The old leader leaves the job's members before it leaves the election: the next leader never places objects on it.
      assert.equal(stats.rollbacks, 0, `round ${round}: no rollback after the leader's node left`);
      assert.deepEqual(stats.nodesPerIteration.slice(12), new Array<number>(18).fill(2), `round ${round}: from the shrink on, on the two kept nodes`);
    }
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
