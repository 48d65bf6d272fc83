/**
 * Spawned children encoded on their worker: a task whose run request names its node (`owner`) hands its
 * children over as their first ledger records, encoded on the worker, so the node's thread neither encodes
 * nor copies their states. The records are exactly what the node would have written; the ledger writes them
 * as they are; a child sent to a worker as its record runs with the state it was spawned with; and the node
 * decodes a child's state only when something asks for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EmbeddedClient } from '../../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../../src/coord/embedded/embedded-server.js';
import { mkdirp } from '../../../src/coord/tree-ops.js';
import { decode, encode } from '../../../src/util/codec.js';
import { Ledger } from '../../../src/runtime/pool/ledger.js';
import { encodedSnapshots } from '../../../src/runtime/pool/task-snapshot.js';
import { encodeRecords, type TaskRecord } from '../../../src/runtime/worker/task-record.js';
import type { FromWorker, RunRequest } from '../../../src/runtime/worker/messages.js';
import { SPAWN_BATCH } from '../../../src/runtime/worker/task-runner.js';
import { WorkerPool, type WorkerEvent } from '../../../src/runtime/worker/worker-pool.js';
import type { SpawnChecksum, Tally } from '../apps/spawn-checksum.js';
import { waitFor } from '../../support/wait.js';

const CHECKSUM = { module: new URL('../apps/spawn-checksum.ts', import.meta.url).href, export: 'default' };
const RETRIED = { ...CHECKSUM, export: 'retried' };
const CYCLIC = { module: new URL('../apps/cyclic-spawn.ts', import.meta.url).href, export: 'default' };
type Ev<T extends FromWorker['type']> = Extract<WorkerEvent, { type: T }>;

const leaf = (value: number): SpawnChecksum => ({ root: false, next: 0, n: 0, value, hold: false });
/** The states of encoded records, in order, each checked to be the record the node would have written. */
function statesOf(records: { bytes: Uint8Array; ends: number[] }, owner: string): unknown[] {
  return records.ends.map((end, i) => {
    const bytes = records.bytes.subarray(i === 0 ? 0 : records.ends[i - 1]!, end);
    const record = decode<TaskRecord>(bytes);
    assert.deepEqual(Buffer.from(bytes), encode({ owner, state: record.state, partial: undefined } satisfies TaskRecord), 'the bytes of the record the node writes');
    assert.equal(record.owner, owner);
    return record.state;
  });
}

describe('spawned children encoded on the worker', () => {
  let pool: WorkerPool;
  const events: WorkerEvent[] = [];
  before(async () => {
    pool = new WorkerPool(1, (e) => events.push(e));
    await pool.start();
  });
  after(() => pool.close());
  const of = (taskId: string) => events.filter((e) => 'taskId' in e && e.taskId === taskId);
  const finished = (e: WorkerEvent) => e.type === 'done' || e.type === 'failed';
  const req = (jobId: string, taskId: string, state: unknown, extra: Partial<RunRequest> = {}): RunRequest =>
    ({ taskId, jobId, ref: RETRIED, state, partial: undefined, board: undefined, varNames: [], owner: 'node-7', ...extra });

  it(`a task with an owner hands its children over as encoded records, ${SPAWN_BATCH} at a time, the rest with its completion`, async () => {
    const root = req('e1', 'root', { root: true, next: 0, n: 70, value: 0, hold: false } satisfies SpawnChecksum);
    pool.run(0, root);
    await waitFor(() => of('root').some(finished), 'the root to finish');
    const reports = of('root');
    assert.deepEqual(reports.map((e) => e.type), ['encoded-children', 'encoded-children', 'done']);
    const [b1, b2] = reports as [Ev<'encoded-children'>, Ev<'encoded-children'>];
    assert.deepEqual(statesOf(b1.records, 'node-7'), Array.from({ length: 32 }, (_, i) => leaf(i + 1)));
    assert.deepEqual(statesOf(b2.records, 'node-7'), Array.from({ length: 32 }, (_, i) => leaf(i + 33)));
    assert.equal((b2.checkpoint.state as SpawnChecksum).next, 64, 'the checkpoint is the state right after the batch');
    const done = reports[2] as Ev<'done'>;
    assert.equal(done.children, undefined);
    assert.deepEqual(statesOf(done.encodedChildren!, 'node-7'), [65, 66, 67, 68, 69, 70].map(leaf));
  });

  it('a task sent as its encoded record runs with the state it was spawned with', async () => {
    const records = encodeRecords('node-7', [leaf(5), leaf(11)]);
    const [a, b] = encodedSnapshots(['x', 'y'], records);
    pool.runBatch(0, [a!, b!].map((s) => req('e2', s.id, undefined, { ref: CHECKSUM, encoded: s.encoded! })));
    await waitFor(() => ['x', 'y'].every((id) => of(id).some(finished)), 'both to finish');
    assert.deepEqual(['x', 'y'].map((id) => (of(id).find(finished) as Ev<'done'>).partial as Tally), [{ count: 1, sum: 5 }, { count: 1, sum: 11 }]);
  });

  it('a spawned state MessagePack cannot encode (a cycle) fails its task with an error naming it', async () => {
    pool.run(0, req('e3', 'cyclic', { root: true }, { ref: CYCLIC }));
    await waitFor(() => of('cyclic').some(finished), 'the task to finish');
    const failed = of('cyclic').find(finished) as Ev<'failed'>;
    assert.equal(failed.type, 'failed');
    assert.match(failed.error, /task cyclic spawned a state that cannot be recorded in the ledger \(MessagePack\)/);
  });

  it('the ledger writes encoded children as they are; the node decodes a state only when asked', async () => {
    const server = new EmbeddedServer();
    const client = new EmbeddedClient(server);
    const paths = { tasks: '/job/tasks', txns: '/job/txns' };
    await mkdirp(client, paths.tasks);
    await mkdirp(client, paths.txns);
    await client.create(`${paths.tasks}/root`, encode({ owner: '', state: { next: 0 }, partial: undefined } satisfies TaskRecord));
    const ledger = new Ledger(client, paths, 'A');
    assert.equal(await ledger.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 }), true);
    const states = [{ value: 1, big: 'x'.repeat(100) }, { value: 2 }, { value: 3 }];
    const children = encodedSnapshots(['c0', 'c1', 'c2'], encodeRecords('A', states));
    await ledger.spawned('root', children, { checkpoint: { state: { next: 3 }, partial: 0 } });
    for (const [i, c] of children.entries()) {
      const { data, stat } = await client.getData(`${paths.tasks}/${c.id}`);
      assert.deepEqual(Buffer.from(data), Buffer.from(c.encoded!), `record ${c.id} holds the worker's bytes`);
      assert.deepEqual(decode<TaskRecord>(data), { owner: 'A', state: states[i], partial: undefined });
      assert.equal(stat.version, 0);
    }
    // The snapshot's state is the spawned state, decoded on first use (and the same object after).
    assert.deepEqual(children[1]!.state, { value: 2 });
    assert.equal(children[1]!.state, children[1]!.state);
    assert.equal(children[1]!.version, 0);
    assert.equal(children[1]!.partial, undefined);
  });
});
