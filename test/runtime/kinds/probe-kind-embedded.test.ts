/**
 * The job-kind seam end to end on an embedded cluster, through a kind written in the tests
 * (apps/probe-kind.ts): member and leader code, layer messages both ways, placement, progress and
 * budget through shared memory, explicit checkpoints that survive a crash, a control request
 * acknowledged by the leader (also one whose handler ends the job), and cancel.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster, type ClusterEvent } from '../../../src/runtime/client/cluster.js';
import { jobLeader } from '../../../src/runtime/client/job-list.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import type { KindRef } from '../../../src/runtime/job/job-spec.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { deferred, waitFor, withDeadline } from '../../support/wait.js';
import { FINISH_HOOK, FINISHED_ON_REQUEST, type MemberFigures } from '../apps/probe-kind.js';
import { expectedSum, probeRoot, type ProbeResult } from '../apps/probe-task.js';
import { openGate } from '../../support/gate.js';

const KIND: KindRef = { module: new URL('../apps/probe-kind.ts', import.meta.url).href, export: 'default' };
const TASK: TaskRef = { module: new URL('../apps/probe-task.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 120_000 };

async function census(cluster: Cluster, job: string): Promise<MemberFigures[]> {
  return (await requestJob(cluster.coordination, job, 'census', null, { timeoutMs: 15_000 })) as MemberFigures[];
}


describe('a job kind on an embedded cluster', () => {
  it('uses member and leader code, layer messages, placement, progress, budget, checkpoints and control; a crash loses nothing', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 7, progressIntervalMs: 100 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    const N = 120_000;
    try {
      const job = await cluster.submit(TASK, probeRoot(N, { hold: true }), { kind: KIND, nodes: 3 });
      const nodes = cluster.localNodes().map((n) => n.id);
      // Placement: the root put one slice on each other member, and each was claimed there.
      await waitFor(() => new Set(events.filter((e) => e.type === 'placement' && e.job === job.id).map((e) => (e as { to: string }).to)).size === 2, 'slices placed on both other members');
      // Everything else is read through the leader's census: layer messages leader→member→leader, per member.
      let figures: MemberFigures[] = [];
      await waitFor(async () => {
        figures = await census(cluster, job.id);
        return figures.length === 3 && figures.every((f) => f.hellosIn === 2 && f.hellosAcked === 2 && f.checkpoints >= 1 && f.progress > 0 && f.taskMessages >= 1);
      }, 'every member to greet both others, get a budget, report progress and checkpoint', 60_000);
      assert.deepEqual(figures.map((f) => f.node), [...nodes].sort());
      const status = await requestJob(cluster.coordination, job.id, 'status') as { kind: string; members: string[] };
      assert.equal(status.kind, 'probe');
      assert.deepEqual(status.members, [...nodes].sort());
      await assert.rejects(requestJob(cluster.coordination, job.id, 'explode'), /probe: unknown request "explode"/);
      // Tasks hold at their ends: crash a member that has checkpointed; the leader recovers its tasks from their checkpoints.
      const leader = await jobLeader(cluster.coordination, job.id);
      const victim = figures.find((f) => f.node !== leader && f.checkpoints >= 1)!;
      await cluster.crashNode(victim.node);
      await waitFor(() => events.some((e) => e.type === 'node-left' && e.node === victim.node), 'the crash to be seen');
      await openGate(cluster.coordination, job.id);
      const result = await withDeadline(job.result<ProbeResult>(), 'the result', 90_000);
      assert.equal(result.sum, expectedSum(N), 'every item counted exactly once');
      assert.ok(result.resumed >= 1, 'a recovered task resumed from its explicit checkpoint, not from its start');
    } finally {
      await cluster.close();
    }
  });

  it('a control request whose handler ends the job is acknowledged before the job ends: its requester gets the answer', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 9 });
    const inHook = deferred();
    const release = deferred();
    (globalThis as Record<symbol, unknown>)[FINISH_HOOK] = () => {
      inHook.resolve();
      return release.promise;
    };
    try {
      const job = await cluster.submit(TASK, probeRoot(1_000, { forever: true }), { kind: KIND, nodes: 2 });
      await waitFor(async () => (await cluster.nodes()).every((n) => n.job === job.id), 'both nodes in the job');
      const answer = requestJob(cluster.coordination, job.id, 'finish', null, { timeoutMs: 60_000 });
      await withDeadline(inHook.promise, 'the handler to have called finish');
      assert.equal(await cluster.coordination.exists(jobPaths(job.id).result), null, 'the outcome waits for the acknowledgement');
      release.resolve();
      assert.deepEqual(await withDeadline(answer, 'the answer'), { finished: true });
      const outcome = await withDeadline(job.outcome(), 'the outcome', 30_000);
      assert.equal(outcome.status, 'done');
      assert.equal((outcome as { value: unknown }).value, FINISHED_ON_REQUEST);
    } finally {
      delete (globalThis as Record<symbol, unknown>)[FINISH_HOOK];
      await cluster.close();
    }
  });

  it('cancel ends a running job as cancelled and frees its nodes for the next job', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 8 });
    try {
      const forever = await cluster.submit(TASK, probeRoot(1_000, { forever: true }), { kind: KIND, nodes: 2 });
      await waitFor(async () => (await cluster.nodes()).every((n) => n.job === forever.id), 'both nodes in the job');
      assert.equal(await forever.cancel(), true);
      assert.equal((await withDeadline(forever.outcome(), 'the outcome', 30_000)).status, 'cancelled');
      await assert.rejects(forever.result(), /was cancelled/);
      assert.equal(await forever.cancel(), false, 'a second cancel finds the job ended');
      await waitFor(async () => (await cluster.nodes()).every((n) => n.job === null && n.assignment === ''), 'the nodes to be free');
      const next = await cluster.submit(TASK, probeRoot(20_000), { kind: KIND, nodes: 2 });
      assert.equal((await withDeadline(next.result<ProbeResult>(), 'the next result', 60_000)).sum, expectedSum(20_000));
    } finally {
      await cluster.close();
    }
  });
});
