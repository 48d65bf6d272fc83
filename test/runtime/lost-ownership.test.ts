/**
 * A running task whose record was taken over elsewhere (the job's leader recovered it from a node it
 * presumed gone): the node's next ledger write for it is refused (LostOwnership), the run is stopped,
 * what it reports until its end is dropped, and nothing it did is recorded; in the runner's task table
 * it goes running → abandoned → gone, and the child it split off meanwhile never becomes a task. A
 * draining node's task taken over the same way loses its migration checkpoint (migrating → gone); what
 * is still pooled when the runner stops goes too (pooled → gone), its record left for the leader. Real
 * JobRunner and Ledgers on the embedded backend, a simulated worker.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import { decode, encode } from '../../src/util/codec.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { JobRunner, type RunnerEvent } from '../../src/runtime/pool/job-runner.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TxnMarker } from '../../src/runtime/pool/ledger-batches.js';
import { Rng } from '../../src/util/rng.js';
import { SimClock } from './sim/sim-clock.js';
import { SimWorkers } from './sim/sim-workers.js';

const flush = async () => {
  for (let i = 0; i < 6; i++) await new Promise((r) => setImmediate(r));
};

const STATE = { n: 6, open: [0], count: 0 };

async function setUp(jobId: string, tasks: string[]) {
  const server = new EmbeddedServer();
  const znodes = ledgerPaths(jobPaths(jobId));
  const client = new EmbeddedClient(server, 600_000);
  const list = new TerminationList(client, znodes.termination);
  await list.init(tasks[0]!, encode({ owner: '', state: STATE, partial: undefined } satisfies TaskRecord));
  for (const id of tasks.slice(1)) await client.create(`${znodes.tasks}/${id}`, Buffer.from(encode({ owner: '', state: STATE, partial: undefined } satisfies TaskRecord)));
  const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
  const leader = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n0');
  for (const id of tasks) assert.ok(await ledger.claim({ id, state: STATE, partial: undefined, version: 0 }), `n1 owns ${id}`);
  const moves: string[] = [];
  const events: RunnerEvent[] = [];
  const workers: SimWorkers = new SimWorkers(1, (e) => runner.onWorker(e));
  const runner: JobRunner = new JobRunner({
    nodeId: 'n1', jobId, ref: { module: 'sim', export: 'default' }, ledger, workers, board: undefined, varNames: [],
    send: async () => undefined,
    peers: () => [],
    setVar: () => undefined,
    onEvent: (e) => void events.push(e),
    rng: new Rng(5),
    clock: new SimClock(),
    onTransition: (task, from, to) => void moves.push(`${task}: ${from} → ${to}`),
  });
  const owner = async (id: string) => decode<TaskRecord>((await client.getData(`${znodes.tasks}/${id}`)).data).owner;
  return { client, znodes, ledger, leader, moves, events, workers, runner, owner };
}

describe('a running task taken over elsewhere', () => {
  it('is stopped on its next write, nothing it did counts, and it leaves the table: running → abandoned → gone', async () => {
    const { client, znodes, leader, moves, events, workers, runner, owner } = await setUp('lost', ['t1']);
    try {
      runner.adopt({ id: 't1', state: structuredClone(STATE), partial: undefined, version: 1 });
      assert.equal(workers.currentTask(0), 't1', 'the task runs');
      // The leader recovers the task (it thinks n1 is gone): the record is n0's now.
      assert.ok(await leader.claim({ id: 't1', state: STATE, partial: undefined, version: 1 }), 'n0 takes the task over');
      // The run splits off a child: the split's write (child record + parent checkpoint) is refused.
      workers.requestSplit(0);
      workers.step(3);
      await flush();
      runner.validate();
      // The child's id is n1's first of this participation: `n1.<incarnation>.0`.
      const child = /^n1\.[0-9a-z]+\.0$/.exec(moves[1]?.split(':')[0] ?? '')?.[0];
      assert.ok(child, `the split's child has n1's first id: ${moves[1]}`);
      assert.deepEqual(moves, ['t1: new → running', `${child}: new → recording`, `${child}: recording → gone`, 't1: running → abandoned'], 'the child never became a task; the run is abandoned');
      assert.equal(runner.idle, false, 'the abandoned run still holds its worker');
      workers.step(1_000); // the run reaches its cancellation point
      await flush();
      runner.validate();
      assert.deepEqual(moves.slice(4), ['t1: abandoned → gone']);
      assert.equal(workers.currentTask(0), undefined, 'the run was stopped');
      assert.equal(runner.idle, true);
      assert.deepEqual(events.filter((e) => e.type === 'failed' || e.type === 'task-done'), [], 'no failure and no completion');
      assert.deepEqual(await client.getChildren(znodes.tasks), ['t1'], 'no child record');
      assert.equal(await owner('t1'), 'n0', 'the task is the leader\'s');
      const markers: TxnMarker[] = [];
      for (const t of await client.getChildren(znodes.txns)) markers.push(decode<TxnMarker>((await client.getData(`${znodes.txns}/${t}`)).data));
      assert.deepEqual(markers.filter((m) => m.node === 'n1' && m.results.length > 0), [], 'no contribution of n1');
    } finally {
      runner.stop();
    }
  });

  it('a draining node loses the migration of a task taken over (migrating → gone); its pooled task stays in the ledger when it stops (pooled → gone)', async () => {
    const { leader, moves, events, workers, runner, owner } = await setUp('lost-drain', ['t1', 't2']);
    try {
      runner.adopt({ id: 't1', state: structuredClone(STATE), partial: undefined, version: 1 });
      runner.adopt({ id: 't2', state: structuredClone(STATE), partial: undefined, version: 1 });
      assert.deepEqual(runner.load, { pooled: 1, running: 1, outgoing: 0 });
      assert.ok(await leader.claim({ id: 't1', state: STATE, partial: undefined, version: 1 }), 'n0 takes t1 over');
      const drained = runner.drain(); // no other member: t2 stays pooled, t1 comes back from its worker
      workers.step(1);
      await drained;
      runner.validate();
      runner.stop();
      runner.validate();
      assert.deepEqual(moves, ['t1: new → running', 't2: new → pooled', 't1: running → migrating', 't1: migrating → gone', 't2: pooled → gone']);
      assert.equal(runner.idle, true);
      assert.deepEqual(events.filter((e) => e.type === 'failed' || e.type === 'migration'), [], 'no failure, no migration');
      assert.equal(await owner('t1'), 'n0', 't1 is the leader\'s');
      assert.equal(await owner('t2'), 'n1', 't2 stays n1\'s in the ledger, for the leader to recover');
    } finally {
      runner.stop();
    }
  });
});
