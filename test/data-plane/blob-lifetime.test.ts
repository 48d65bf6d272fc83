/**
 * Blob references in the coordination service and what they keep alive: blobs of removed jobs are
 * collected from the directory and from every node's store (nothing left after 100 jobs), a checkpoint
 * counts as replicated once two nodes hold it and survives its writer, a copy whose listing as held
 * loses the connection is listed once the session is back, and a peer is refused blobs of jobs it is
 * not a member of.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { CoordError } from '../../src/coord/errors.js';
import { deleteRecursive, mkdirp } from '../../src/coord/tree-ops.js';
import type { CoordClient } from '../../src/coord/types.js';
import { DataError } from '../../src/data/data-error.js';
import { referenceName } from '../../src/data/blob-directory.js';
import { DataPlane } from '../../src/data/data-plane.js';
import { DEFAULT_ROOT as ROOT, jobPaths } from '../../src/runtime/job/job-paths.js';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import { withDeadline } from '../support/wait.js';

const T = { timeout: 120_000 };
const planes: DataPlane[] = [];
after(async () => {
  for (const p of planes) await p.close();
});

async function cluster(ids: string[], members: Map<string, Set<string>>, wrap: (id: string, client: EmbeddedClient) => CoordClient = (_id, c) => c) {
  const server = new EmbeddedServer();
  const network = InProcessNetwork.get(`blobs-${randomUUID().slice(0, 8)}`);
  const nodes = new Map<string, { plane: DataPlane; client: EmbeddedClient; transport: InProcessTransport }>();
  for (const id of ids) {
    const client = new EmbeddedClient(server);
    const transport = new InProcessTransport(id, network);
    await transport.start();
    const plane = await DataPlane.start({
      client: wrap(id, client), transport, root: ROOT, isMember: (peer, job) => members.get(job)?.has(peer) ?? false, transfer: { chunkBytes: 16 * 1024, stallMs: 2_000 },
      jobExists: async (job) => (await client.exists(jobPaths(job).base)) !== null,
    });
    planes.push(plane);
    nodes.set(id, { plane, client, transport });
  }
  const admin = new EmbeddedClient(server);
  const newJob = async (jobId: string, memberIds: string[]) => {
    await mkdirp(admin, jobPaths(jobId).base);
    members.set(jobId, new Set(memberIds));
  };
  const removeJob = (jobId: string) => deleteRecursive(admin, jobPaths(jobId).base);
  return { nodes, admin, newJob, removeJob, plane: (id: string) => nodes.get(id)!.plane };
}

describe('blob lifetime', () => {
  it('a copy whose listing as held loses the connection is listed once the session reconnects', T, async () => {
    let failures = 1;
    // Node b's session loses the connection once, on the create that lists it as a holder.
    const flaky = (id: string, client: EmbeddedClient): CoordClient => (id !== 'b' ? client : new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'create') return Reflect.get(target, prop, receiver) as unknown;
        return (path: string, ...rest: unknown[]) => (path.includes('/holders/') && failures-- > 0
          ? Promise.reject(new CoordError('CONNECTION_LOSS', path))
          : (target.create as (...a: unknown[]) => Promise<string>).call(target, path, ...rest));
      },
    }));
    const { newJob, plane } = await cluster(['a', 'b'], new Map(), flaky);
    await newJob('flaky', ['a', 'b']);
    const ref = await plane('a').share(randomBytes(30_000), 'flaky', 'state');
    await plane('b').obtain(ref, 'flaky');
    assert.equal(failures, -1, 'the listing was interrupted once');
    assert.deepEqual((await withDeadline(plane('a').awaitReplicated(ref, 2, 5_000), 'b to be listed as a holder', 10_000)).sort(), ['a', 'b']);
  });

  it('leaves nothing behind after 100 jobs\' worth of share, fetch and removal; a live job keeps its blobs', T, async () => {
    const { admin, newJob, removeJob, plane } = await cluster(['a', 'b', 'c'], new Map());
    await newJob('keeper', ['a', 'b', 'c']);
    const kept = await plane('a').share(randomBytes(40_000), 'keeper', 'kept input');
    for (let i = 0; i < 100; i++) {
      const job = `job-${i}`;
      await newJob(job, ['a', 'b', 'c']);
      const input = await plane('a').share(randomBytes(20_000 + i), job, 'input');
      const state = await plane('b').share(randomBytes(5_000 + i), job, 'state');
      await plane('b').obtain(input, job);
      await plane('c').obtain(input, job);
      await plane('a').obtain(state, job);
      if (i % 3 === 0) await plane('c').obtain(kept, 'keeper');
      await removeJob(job);
      if (i % 10 === 9) {
        await plane('a').collect();
        await Promise.all([plane('b').collectLocal(), plane('c').collectLocal()]);
      }
    }
    assert.deepEqual(await admin.getChildren('/tidepool/blobs'), [kept.hash], 'only the live job\'s blob is referenced');
    assert.deepEqual(plane('a').store.list().map((b) => b.hash), [kept.hash]);
    assert.deepEqual(plane('b').store.list(), []);
    assert.deepEqual(plane('c').store.list().map((b) => b.hash), [kept.hash]);
    await removeJob('keeper');
    assert.deepEqual((await plane('b').collect()).removed, [kept.hash]);
    await Promise.all([plane('a').collectLocal(), plane('c').collectLocal()]);
    assert.deepEqual(await admin.getChildren('/tidepool/blobs'), []);
    for (const id of ['a', 'b', 'c']) {
      assert.deepEqual(plane(id).store.list(), [], `node ${id} holds nothing`);
      assert.equal(plane(id).store.stats.memoryBytes + plane(id).store.stats.diskBytes, 0);
    }
  });

  it('a scoped reference is one record\'s: discarding it removes the blob only when no other scope or job uses the bytes', T, async () => {
    const { admin, newJob, plane } = await cluster(['s', 't', 'u'], new Map([['j', new Set(['s', 't'])]]));
    await newJob('j', ['s', 't']);
    const bytes = randomBytes(30_000);
    const first = await plane('s').share(bytes, 'j', 'state of task a', 'task.a');
    const second = await plane('s').share(bytes, 'j', 'state of task b', 'task.b');
    assert.equal(first.hash, second.hash, 'the same bytes are one blob');
    // A member may fetch a blob its job uses through a scope only.
    assert.ok((await plane('t').obtain(first, 'j')).equals(bytes));
    await assert.rejects(plane('u').obtain(first, 'j'), (err: unknown) => err instanceof DataError);
    const refs = () => admin.getChildren(`/tidepool/blobs/${first.hash}/refs`).catch(() => [] as string[]);
    assert.deepEqual((await refs()).sort(), ['j~task.a', 'j~task.b']);
    assert.deepEqual((await plane('s').directory.lookup(first.hash))?.jobs, ['j']);
    await plane('s').discard(first, 'j', 'task.a');
    assert.deepEqual(await refs(), ['j~task.b'], 'task b still uses the bytes');
    assert.ok(plane('s').store.has(first.hash));
    await plane('s').discard(second, 'j', 'task.b');
    assert.deepEqual(await admin.getChildren('/tidepool/blobs'), [], 'the last scope gone, the blob is gone');
    assert.equal(plane('s').store.has(first.hash), false, 'and its writer\'s bytes at once');
    assert.deepEqual(await plane('t').collectLocal(), [first.hash], 'the other holder drops its copy at its next collection');
    // A job-level reference of the same bytes outlives any scope.
    const input = await plane('s').share(bytes, 'j', 'input');
    await plane('s').share(bytes, 'j', 'state of task c', 'task.c');
    await plane('s').discard(input, 'j', 'task.c');
    assert.deepEqual(await refs(), ['j']);
    assert.ok(plane('s').store.has(input.hash));
    assert.throws(() => referenceName('j', 'a/b'), /scope/);
  });

  it('counts a checkpoint as replicated once two nodes hold it; it survives the node that wrote it', T, async () => {
    const { nodes, newJob, plane } = await cluster(['w', 'x', 'y'], new Map());
    await newJob('j', ['w', 'x', 'y']);
    const bytes = randomBytes(300_000);
    const ref = await plane('w').share(bytes, 'j', 'checkpoint of task t1');
    let replicated = false;
    const waiting = plane('w').awaitReplicated(ref, 2, 20_000).then((ids) => {
      replicated = true;
      return ids;
    });
    await plane('w').directory.lookup(ref.hash);
    assert.equal(replicated, false, 'one holder is not enough');
    await plane('x').obtain(ref, 'j');
    assert.deepEqual(await withDeadline(waiting, 'replication'), ['w', 'x']);
    // The writer dies: its session ends, its holder entry with it; the checkpoint is still there.
    await nodes.get('w')!.client.close();
    await nodes.get('w')!.transport.close();
    assert.deepEqual((await plane('y').directory.lookup(ref.hash))?.holders.map((h) => h.nodeId), ['x']);
    assert.ok((await plane('y').obtain(ref, 'j')).equals(bytes));
  });

  it('refuses a peer that is not a member of the job, or asks for a blob under a job that does not use it', T, async () => {
    const members = new Map<string, Set<string>>();
    const { newJob, plane } = await cluster(['p', 'q', 'r'], members);
    await newJob('secret', ['p', 'q']);
    await newJob('other', ['p', 'r']);
    const ref = await plane('p').share(randomBytes(50_000), 'secret');
    for (const job of ['secret', 'other']) {
      await assert.rejects(plane('r').obtain(ref, job), (err: unknown) => {
        assert.ok(err instanceof DataError && err.code === 'REFUSED', String(err));
        assert.match(err.message, new RegExp(`node r may not fetch blob ${ref.hash.slice(0, 12)} for job ${job}`));
        return true;
      });
    }
    assert.equal(plane('r').store.has(ref.hash), false);
    assert.equal((await plane('q').obtain(ref, 'secret')).length, 50_000);
  });
});
