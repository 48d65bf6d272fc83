/**
 * The data plane in jobs on an embedded cluster: a 5 MB task state stolen, migrated on drain and
 * recovered after a crash; a 50 MB binary input fetched once per node and seen by tasks as shared
 * memory; blobs removed with their jobs; a 3 MB final value delivered by reference; inputs too large
 * for a spec refused without a data plane.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { decode } from '../../src/util/codec.js';
import { Cluster, type ClusterEvent, type JobHandle } from '../../src/runtime/client/cluster.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { taskOwners } from '../support/ledger-probes.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { pruneFinishedJobs } from '../../src/runtime/client/job-retention.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { openGate } from '../support/gate.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { expectedSum, rootBigState } from '../runtime/apps/big-state.js';
import { binaryInput } from './binary-input.js';
import { assemble, streamBytes, type Piece } from '../runtime/apps/big-result.js';
import type { JobOutcome } from '../../src/runtime/job/outcome.js';
import { PAYLOAD_BYTES } from '../runtime/apps/checkpoint-rounds.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';

const app = (name: string): TaskRef => ({ module: new URL(`../runtime/apps/${name}.ts`, import.meta.url).href, export: 'default' });
const T = { timeout: 180_000 };

/** Records of the job's live tasks as stored (raw sizes and references). */
async function storedRecords(cluster: Cluster, jobId: string): Promise<Array<{ bytes: number; record: TaskRecord }>> {
  const dir = ledgerPaths(jobPaths(jobId)).tasks;
  const out: Array<{ bytes: number; record: TaskRecord }> = [];
  for (const id of await cluster.coordination.getChildren(dir)) {
    try {
      const { data } = await cluster.coordination.getData(`${dir}/${id}`);
      out.push({ bytes: data.length, record: decode<TaskRecord>(data) });
    } catch {
      // completed meanwhile
    }
  }
  return out;
}

/** Kills `node`, lets the held big-state tasks end, and checks that the job's sum is exact. */
async function crashThenExact(cluster: Cluster, job: JobHandle, node: string, n: number): Promise<void> {
  await cluster.crashNode(node);
  await openGate(cluster.coordination, job.id);
  const outcome = await withDeadline(job.outcome(), 'the outcome', 120_000);
  assert.equal(outcome.status, 'done', JSON.stringify(outcome));
  assert.equal(await job.result<number>(), expectedSum(n));
}

describe('the data plane in jobs (embedded cluster)', () => {
  it('a 5 MB task state is stolen, migrated on drain and recovered after a crash; the result is exact', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 11, progressIntervalMs: 0 });
    const seen = { steal: 0, migration: 0 };
    try {
      const n = 60_000;
      const job = await cluster.submit(app('big-state'), rootBigState(n, 20_000, { hold: true }), { nodes: 3 });
      cluster.on((e) => {
        if ((e.type === 'steal' || e.type === 'migration') && e.job === job.id) seen[e.type]++;
      });
      await waitFor(() => seen.steal > 0, 'a 5 MB task to be stolen', 60_000);
      // The ledger holds references, not the 5 MB states.
      const records = await storedRecords(cluster, job.id);
      assert.ok(records.some((r) => r.record.ref !== undefined), 'some record references its state');
      for (const r of records) assert.ok(r.bytes < 1024, `a record of ${r.bytes} bytes`);
      const leader = await jobLeader(cluster.coordination, job.id);
      const owner = async (except: string[]) => [...(await taskOwners(cluster.coordination, job.id)).keys()].find((id) => id !== '' && !except.includes(id));
      let drained: string | undefined;
      await waitFor(async () => (drained = await owner([leader!])) !== undefined, 'a task on a node other than the leader', 60_000);
      assert.ok(await cluster.drain(drained!));
      await waitFor(() => seen.migration > 0, 'a 5 MB task to migrate off the drained node', 60_000);
      let victim: string | undefined;
      await waitFor(async () => (victim = await owner([leader!, drained!])) !== undefined, 'a task on the third node', 60_000);
      await crashThenExact(cluster, job, victim!, n);
    } finally {
      await cluster.close();
    }
  });

  it('a 50 MB binary input: each node fetches it once, tasks see it as shared memory; its blobs go with the job', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 5, progressIntervalMs: 0 });
    try {
      const { bytes, sum } = binaryInput(50 * 1024 * 1024);
      const job = await cluster.submit(app('byte-sum'), { lo: 0, hi: bytes.length, sum: 0 }, { nodes: 3, input: bytes });
      const spec = decode<{ input?: unknown; inputBlob?: { ref: { hash: string; size: number } } }>((await cluster.coordination.getData(jobPaths(job.id).spec)).data);
      assert.equal(spec.input, undefined, 'the spec holds no bytes');
      assert.equal(spec.inputBlob?.ref.size, bytes.length);
      assert.equal(await withDeadline(job.result<number>(), 'the result', 120_000), sum);
      const ran = cluster.localNodes().filter((node) => node.data!.store.has(spec.inputBlob!.ref.hash));
      assert.ok(ran.length >= 1);
      for (const node of ran) assert.equal(node.data!.transfer.stats.fetched, 1, `node ${node.id} fetched the input once`);
      // Retention removes the job and, with it, its blobs: from the directory, then from every store.
      assert.deepEqual(await pruneFinishedJobs(cluster.coordination, { keep: 0, graceMs: 0 }), [job.id]);
      assert.deepEqual(await cluster.coordination.getChildren('/tidepool/blobs'), []);
      for (const node of cluster.localNodes()) {
        await node.data!.collectLocal();
        assert.equal(node.data!.store.list().length, 0, `node ${node.id} keeps no blob`);
      }
    } finally {
      await cluster.close();
    }
  });

  it('a node that drains leaves every blob of the job on two other members: a crash right after loses nothing', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 3, workers: 1, seed: 17, progressIntervalMs: 0 });
    const events: ClusterEvent[] = [];
    cluster.on((e) => events.push(e));
    try {
      const n = 120_000;
      const job = await cluster.submit(app('big-state'), rootBigState(n, 20_000, { hold: true }), { nodes: 3 });
      const leader = await (async () => { let l: string | null = null; await waitFor(async () => (l = await jobLeader(cluster.coordination, job.id)) !== null, 'a leader'); return l!; })();
      let drained: string | undefined;
      await waitFor(async () => (drained = [...(await taskOwners(cluster.coordination, job.id)).keys()].find((id) => id !== '' && id !== leader)) !== undefined, 'a task on a node other than the leader', 60_000);
      assert.ok(await cluster.drain(drained!));
      await waitFor(() => events.some((e) => e.type === 'job-left' && e.node === drained && e.job === job.id), 'the drained node to leave the job', 60_000);
      // The invariant the drain restores: every blob of the job the drained node held is now held by both
      // remaining nodes (its bytes are still in the drained node's store: an embedded node keeps its data plane).
      const remaining = cluster.localNodes().map((x) => x.id).filter((id) => id !== drained).sort();
      const blobs = cluster.localNodes().find((x) => x.id === drained)!.data!.store.list().map((b) => b.hash);
      let checked = 0;
      for (const hash of blobs) {
        const refs = await cluster.coordination.getChildren(`/tidepool/blobs/${hash}/refs`).catch(() => [] as string[]);
        if (!refs.some((r) => r.startsWith(job.id))) continue;
        // Nodes only: the submitting client holds the root state too, but a client may go at any time.
        const holders = (await cluster.coordination.getChildren(`/tidepool/blobs/${hash}/holders`).catch(() => [] as string[])).filter((h) => h !== drained && !h.startsWith('client-')).sort();
        assert.deepEqual(holders, remaining, `blob ${hash.slice(0, 12)} is held by both remaining nodes`);
        checked++;
      }
      assert.ok(checked > 0, 'the job references blobs (its 5 MB states, its code)');
      // Either remaining node may now crash: the other has every state.
      await crashThenExact(cluster, job, remaining.find((id) => id !== leader)!, n);
    } finally {
      await cluster.close();
    }
  });

  it('a task\'s superseded checkpoints go as it moves on, not with the job: none is left when it completes', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 3, progressIntervalMs: 0 });
    try {
      const rounds = 8;
      const job = await cluster.submit(app('checkpoint-rounds'), { round: 0, rounds, payload: new Uint8Array(0) }, { nodes: 2 });
      assert.equal(await withDeadline(job.result<number>(), 'the result', 60_000), rounds);
      // Every checkpoint was a blob held by both nodes (referenced once a second node had a copy). The
      // job still exists (no retention ran), so only the per-record references can have let them go.
      const blobsOfJob = async () => {
        const out: string[] = [];
        for (const hash of await cluster.coordination.getChildren('/tidepool/blobs').catch(() => [] as string[])) {
          const refs = await cluster.coordination.getChildren(`/tidepool/blobs/${hash}/refs`).catch(() => [] as string[]);
          if (refs.some((r) => r.startsWith(job.id))) out.push(hash);
        }
        return out;
      };
      await waitFor(async () => (await blobsOfJob()).length === 0, 'the job\'s checkpoint blobs to be gone from the directory', 30_000);
      assert.equal(await cluster.coordination.exists(jobPaths(job.id).base) !== null, true, 'the job itself is still there');
      for (const node of cluster.localNodes()) {
        await node.data!.collectLocal();
        assert.equal(node.data!.store.list().filter((b) => b.size > PAYLOAD_BYTES).length, 0, `node ${node.id} keeps no checkpoint`);
      }
    } finally {
      await cluster.close();
    }
  });

  it('a final value of 3 MB (past the coordination service\'s 1 MiB) reaches the submitter through the data plane, byte for byte', T, async () => {
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1, seed: 12 });
    try {
      const total = 3 * 1024 * 1024 + 17;
      const job = await cluster.submit(app('big-result'), { lo: 0, hi: total }, { nodes: 2 });
      const pieces = await withDeadline(job.result<Piece[]>(), 'the result', 120_000);
      assert.equal(Buffer.compare(Buffer.from(assemble(pieces, total)), Buffer.from(streamBytes(0, total))), 0, 'every byte, once, in place');
      // The result znode holds the reference, not the bytes.
      const stored = await cluster.coordination.getData(jobPaths(job.id).result);
      assert.ok(stored.data.length < 4096, `result znode of ${stored.data.length} bytes`);
      const outcome = decode<JobOutcome>(stored.data) as Extract<JobOutcome, { status: 'done' }>;
      assert.equal(outcome.value, undefined);
      assert.ok(outcome.valueRef && outcome.valueRef.size > total, 'referenced in the data plane');
    } finally {
      await cluster.close();
    }
  });

  it('an input too large for a job spec is refused, naming its size, when the submitter has no data plane', T, async () => {
    const secret = ClusterSecret.random();
    const client = await connect(`embedded:refuse-${Date.now()}`, { secret });
    try {
      await assert.rejects(
        submitJob(client, { ...taskPoolJob(app('byte-sum'), { lo: 0, hi: 0, sum: 0 }), input: Buffer.alloc(100_000), secret }),
        /the job input is 100000 bytes, over the 65536 bytes a job spec holds inline/,
      );
    } finally {
      await client.close();
    }
  });
});
