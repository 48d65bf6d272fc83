/**
 * An offered task starts on an idle worker before the receiver's claim on it settles; what the run
 * reports (global-variable proposals too) waits for the claim: handed on in order once claimed, dropped (and the run stopped) when the
 * sender took the task back first. Real JobRunner and Ledgers on the embedded backend; simulated
 * worker and sender, the receiver's claim held at a gate.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import { decode, encode } from '../../src/util/codec.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { JobRunner } from '../../src/runtime/pool/job-runner.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { RuntimeMessage } from '../../src/runtime/pool/pool-messages.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TxnMarker } from '../../src/runtime/pool/ledger-batches.js';
import { Rng } from '../../src/util/rng.js';
import { SimClock } from './sim/sim-clock.js';
import { SimWorkers } from './sim/sim-workers.js';

const flush = async () => {
  for (let i = 0; i < 6; i++) await new Promise((r) => setImmediate(r));
};

/** The compositions tree of 4 (2⁴ nodes) as one task, owned by the sender n0 at version 0. */
const STATE = { n: 4, open: [0], count: 0 };

async function setUp(jobId: string) {
  const server = new EmbeddedServer();
  const paths = jobPaths(jobId);
  const znodes = ledgerPaths(paths);
  const client = new EmbeddedClient(server, 600_000);
  await new TerminationList(client, znodes.termination).init('t1', encode({ owner: 'n0', state: STATE, partial: undefined } satisfies TaskRecord));
  const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
  const senderLedger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n0');
  // The receiver's claim waits for the test's go.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const claim = ledger.claim.bind(ledger);
  ledger.claim = (snapshot) => gate.then(() => claim(snapshot));
  const writes: string[] = [];
  for (const name of ['complete', 'completeAll', 'split', 'spawned', 'checkpoint'] as const) {
    const original = (ledger[name] as (...a: unknown[]) => Promise<void>).bind(ledger);
    (ledger as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => (writes.push(name), original(...args));
  }
  const sent: Array<{ to: string; m: RuntimeMessage }> = [];
  const proposals: unknown[] = [];
  /** The task's moves between the states of the runner's task table (pool-tasks.ts). */
  const moves: string[] = [];
  const workers: SimWorkers = new SimWorkers(1, (e) => runner.onWorker(e));
  const runner: JobRunner = new JobRunner({
    nodeId: 'n1', jobId, ref: { module: 'sim', export: 'default' }, ledger, workers, board: undefined, varNames: [],
    send: async (to, m) => void sent.push({ to, m }),
    peers: () => ['n0'],
    setVar: (_name, value) => void proposals.push(value),
    onEvent: () => undefined,
    rng: new Rng(3),
    clock: new SimClock(),
    // No steal requests of its own get in the way of what the test looks at.
    steal: { minBackoffMs: 60_000, maxBackoffMs: 60_000, requestTimeoutMs: 60_000 },
    onTransition: (task, from, to) => void moves.push(`${task}: ${from} → ${to}`),
  });
  // A run's global-variable proposal (the simulated worker makes none of its own).
  const propose = (value: number) => runner.onWorker({ slot: 0, type: 'setVar', jobId, taskId: 't1', name: 'bound', value });
  const offer = () => runner.onMessage('n0', { type: 'offer', job: jobId, task: { id: 't1', state: structuredClone(STATE), partial: undefined, version: 0 } });
  const acks = () => sent.filter((s) => s.m.type === 'offer-ack').map((s) => (s.m as { claimed: boolean }).claimed);
  const record = async () => decode<TaskRecord>((await client.getData(`${znodes.tasks}/t1`)).data);
  const markers = async () => {
    const out: TxnMarker[] = [];
    for (const t of await client.getChildren(znodes.txns)) out.push(decode<TxnMarker>((await client.getData(`${znodes.txns}/${t}`)).data));
    return out;
  };
  return { client, paths, znodes, runner, workers, senderLedger, release, writes, proposals, moves, propose, offer, acks, record, markers };
}

describe('a task started before its claim settled', () => {
  it('runs at once; its completion is written only after the claim, exactly once', async () => {
    const t = await setUp('early-claimed');
    try {
      t.offer();
      await flush();
      assert.equal(t.workers.currentTask(0), 't1', 'the offered task runs while its claim is still pending');
      assert.deepEqual(t.acks(), [], 'no answer before the claim');
      t.propose(7);
      t.workers.step(1_000); // the whole tree: the run ends before its claim
      await flush();
      assert.deepEqual(t.writes, [], 'nothing the run reported was written before the claim');
      assert.deepEqual(t.proposals, [], 'nor proposed');
      assert.equal(t.runner.idle, false, 'a run whose claim is pending keeps the node busy');
      assert.equal((await t.record()).owner, 'n0');

      t.release();
      const deadline = Date.now() + 10_000;
      while (await t.client.exists(`${t.znodes.tasks}/t1`)) {
        assert.ok(Date.now() < deadline, 'the completion was never written');
        await flush();
      }
      assert.deepEqual(t.acks(), [true]);
      assert.deepEqual(t.proposals, [7], 'the held proposal went out once the claim landed');
      const results = (await t.markers()).flatMap((m) => m.results);
      assert.deepEqual(results, [2 ** 4], 'every tree node counted once, by the receiver');
      assert.equal(t.runner.stats.tasksDone, 1);
      assert.equal(t.runner.idle, true);
      assert.deepEqual(t.moves, ['t1: new → early', 't1: early → running', 't1: running → completing', 't1: completing → gone']);
    } finally {
      t.runner.stop();
    }
  });

  it('is stopped when the sender took the task back first, and nothing it did is recorded', async () => {
    const t = await setUp('early-refused');
    try {
      t.offer();
      await flush();
      assert.equal(t.workers.currentTask(0), 't1');
      // The run splits off a child (held), then the sender takes the task back before the receiver's claim lands.
      t.workers.requestSplit(0);
      t.workers.step(2);
      t.propose(7);
      await flush();
      assert.ok(await t.senderLedger.claim({ id: 't1', state: STATE, partial: undefined, version: 0 }), 'the sender takes the task back');

      t.release();
      const deadline = Date.now() + 10_000;
      while (t.acks().length === 0) {
        assert.ok(Date.now() < deadline, 'the offer was never answered');
        await flush();
      }
      assert.deepEqual(t.acks(), [false], 'the claim was refused');
      t.propose(5); // reported after the refusal, before the run reached its stop
      t.workers.step(1); // the run reaches its next cancellation point
      await flush();
      assert.equal(t.workers.currentTask(0), undefined, 'the refused run was stopped');
      assert.equal(t.runner.idle, true);
      assert.deepEqual(t.writes, [], 'neither the held split nor anything after it was written');
      assert.deepEqual(t.proposals, [], 'no proposal of the dropped run went out');
      assert.deepEqual(await t.client.getChildren(t.znodes.tasks), ['t1'], 'no child record');
      assert.equal((await t.record()).owner, 'n0', 'the task is the sender\'s');
      const markers = await t.markers();
      assert.deepEqual(markers.filter((m) => m.node === 'n1'), [], 'no transaction of the receiver');
      assert.deepEqual(markers.flatMap((m) => m.results), [], 'no completion');
      assert.equal(t.runner.stats.tasksDone, 0);
      assert.deepEqual(t.moves, ['t1: new → early', 't1: early → abandoned', 't1: abandoned → gone'], 'the held split never became a task here');
    } finally {
      t.runner.stop();
    }
  });
});
