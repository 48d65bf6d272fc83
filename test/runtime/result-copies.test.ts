/**
 * A job's final value too large for its outcome znode survives the death of its leader's node: before
 * the outcome is published a second holder has a copy (job/result-copies.ts). On a real ZooKeeper with
 * `tidepool node` processes (apps/big-final.ts: a value that no task's contribution shares), the leader's
 * node is killed with SIGKILL as soon as the outcome appears and before any client fetched the value; a
 * client connecting afterwards still gets it, byte for byte. The job on two nodes (the other member keeps
 * the copy); on one node of two (the idle node keeps it); on a cluster of one node (the submitting
 * client's data plane keeps it). Then on the embedded backend, with in-process nodes and a crash.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, embeddedServer } from '../../src/coord/connect.js';
import { joinPath } from '../../src/coord/paths.js';
import type { CoordClient } from '../../src/coord/types.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { clusterPaths } from '../../src/runtime/job/job-paths.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { TidepoolNode } from '../../src/runtime/node/node.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import type { BigFinal } from './apps/big-final.js';
import { streamBytes } from './apps/big-result.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const BIG: TaskRef = { module: new URL('./apps/big-final.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 240_000 };
/**
 * The value's size for each job: distinct, so that every job's value is a blob of its own (equal
 * content is one blob: a later job's would still be listed with an earlier job's holders).
 */
let sizes = 3 * 1024 * 1024;
const nextSize = () => (sizes += 7);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The nodes holding a blob, the first to hold it (the leader's node, which stored it) first. */
async function holdersInOrder(client: CoordClient, hash: string): Promise<string[]> {
  const dir = joinPath(clusterPaths().root, 'blobs', hash, 'holders');
  const stats = await Promise.all((await client.getChildren(dir)).map(async (id) => ({ id, czxid: (await client.getData(joinPath(dir, id))).stat.czxid })));
  return stats.sort((a, b) => (a.czxid < b.czxid ? -1 : 1)).map((s) => s.id);
}

/** The job's outcome as it appears: done, its value in the data plane, held by two nodes (leader's first). */
async function outcomeHeldTwice(client: CoordClient, jobId: string): Promise<[string, string]> {
  const outcome = await awaitOutcome(client, jobId);
  assert.equal(outcome.status, 'done', JSON.stringify(outcome).slice(0, 300));
  assert.ok(outcome.status === 'done' && outcome.valueRef, 'the value is in the data plane, not in the znode');
  const holders = await holdersInOrder(client, outcome.valueRef.hash);
  assert.ok(holders.length >= 2, `held by ${holders.join(', ')} when the outcome appeared: two nodes before it is published`);
  return holders as [string, string];
}

/** A client connecting now (nothing fetched the value before) gets every byte of it. */
async function fetchedIntact(connection: string, secret: ClusterSecret, jobId: string, total: number): Promise<void> {
  const cluster = await Cluster.connect(connection, { secret });
  try {
    const value = await (await cluster.job(jobId)).result<BigFinal>();
    assert.equal(value.covered, total, 'every task counted');
    assert.equal(sha256(value.bytes!), sha256(streamBytes(0, total)), 'every byte of the value');
  } finally {
    await cluster.close();
  }
}

describe('a large final value outlives its leader\'s node', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  const secret = secretFile();
  const started: NodeProcess[] = [];
  before(async () => {
    zk = await startEnsemble({ size: 1 });
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    for (const n of started) n.kill('SIGKILL');
    await Promise.all(started.map((n) => n.exited));
    await client.close();
    await zk.stop();
  });

  /** Runs the job on `jobNodes` of the started nodes, kills the leader's node at the outcome, then fetches. */
  async function survives(jobNodes: number): Promise<{ leader: string; keeper: string }> {
    const total = nextSize();
    const spec = await submitJob(client, { ...taskPoolJob(BIG, { lo: 0, hi: total }), nodes: jobNodes, secret: secretIn(secret) });
    const [leader, keeper] = await outcomeHeldTwice(client, spec.id);
    const victim = started.find((n) => n.id === leader);
    assert.ok(victim, `the leader's node ${leader} is one of ours`);
    assert.ok(victim.process.exitCode === null && victim.process.signalCode === null, `the leader's node ${leader} is alive until killed now`);
    victim.kill('SIGKILL');
    await victim.exited;
    await fetchedIntact(zk.connectionString, secretIn(secret), spec.id, total);
    return { leader, keeper };
  }

  it('a job on two nodes: the other member keeps a copy', T, async () => {
    started.push(...await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret }))));
    await survives(2);
  });

  it('a job on one node: an idle node of the cluster keeps a copy', T, async () => {
    // One node of the first test is left; a second one joins. The job runs on one of them.
    started.push(await startNodeProcess({ zk: zk.connectionString, secretFile: secret }));
    const { keeper } = await survives(1);
    assert.ok(started.some((n) => n.id === keeper), `the copy is on ${keeper}, a node of the cluster`);
  });

  it('a cluster of one node: the submitting client\'s data plane keeps the copy, and serves it once the node is gone', T, async () => {
    // Of the nodes above one is left, alone in the cluster.
    const alive = started.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
    assert.equal(alive.length, 1, 'one node left');
    const submitter = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      const total = nextSize();
      const job = await submitter.submitJob({ ...taskPoolJob(BIG, { lo: 0, hi: total }), nodes: 1 });
      const [leader, keeper] = await outcomeHeldTwice(client, job.id);
      assert.equal(leader, alive[0]!.id);
      assert.match(keeper, /^client-/, `the copy is the submitting client's (${keeper})`);
      alive[0]!.kill('SIGKILL');
      await alive[0]!.exited;
      await fetchedIntact(zk.connectionString, secretIn(secret), job.id, total);
      assert.equal((await job.result<BigFinal>()).covered, total, 'the submitter has it too');
    } finally {
      await submitter.close();
    }
  });
});

describe('a large final value outlives its leader\'s node (embedded backend)', () => {
  it('a job on one in-process node of two: the crash of its node loses nothing', T, async () => {
    const name = `keep-${randomBytes(3).toString('hex')}`;
    const secret = ClusterSecret.random();
    const admin = await connect(`embedded:${name}`, { secret });
    const network = InProcessNetwork.get(name);
    const nodes: Array<{ node: TidepoolNode; client: CoordClient }> = [];
    try {
      for (const id of ['n-a', 'n-b']) {
        const client = await connect(`embedded:${name}`, { secret });
        nodes.push({ node: await TidepoolNode.start({ client, transport: new InProcessTransport(id, network), workers: 1, nodeId: id, secret }), client });
      }
      const total = nextSize();
      const spec = await submitJob(admin, { ...taskPoolJob(BIG, { lo: 0, hi: total }), nodes: 1, secret });
      const [leader] = await outcomeHeldTwice(admin, spec.id);
      const victim = nodes.find((n) => n.node.id === leader)!;
      await victim.node.crash();
      embeddedServer(name).expire(victim.client.sessionId);
      await fetchedIntact(`embedded:${name}`, secret, spec.id, total);
    } finally {
      for (const n of nodes) {
        await n.node.crash();
        await n.client.close().catch(() => undefined);
      }
      await admin.close();
    }
  });
});
