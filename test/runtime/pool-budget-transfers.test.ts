/**
 * The pool memory budget counts tasks a node would gain from elsewhere, not only those it spawns
 * (pool-budget.ts): a node whose budget has room for no more task does not steal, refuses an offered
 * task without claiming it (the sender keeps it: nothing lost), and offers a task it recovers to another
 * member; the same node without a budget steals and claims. Real JobRunner and Ledger on the embedded backend; simulated workers, time and peer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { encode } from '../../src/util/codec.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { JobRunner } from '../../src/runtime/pool/job-runner.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import { POOL_TASK_BYTES } from '../../src/runtime/pool/pool-budget.js';
import type { RuntimeMessage } from '../../src/runtime/pool/pool-messages.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { Rng } from '../../src/util/rng.js';
import { SimClock } from './sim/sim-clock.js';
import { SimWorkers } from './sim/sim-workers.js';

const flush = async () => {
  for (let i = 0; i < 6; i++) await new Promise((r) => setImmediate(r));
};

/**
 * A node with 1 simulated worker whose one task ended and is being completed (its ledger write held): its
 * worker is idle and nothing it holds comes back to it, so it would ask for work; with or without a budget of one task.
 */
async function nodeCompletingOneTask(jobId: string, poolMemoryBytes: number | undefined) {
  const server = new EmbeddedServer();
  const znodes = ledgerPaths(jobPaths(jobId));
  const client = new EmbeddedClient(server, 600_000);
  const root = { n: 4, open: [0], count: 0 };
  await new TerminationList(client, znodes.termination).init('root', encode({ owner: 'n1', state: root, partial: undefined }));
  const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
  let claims = 0;
  const claim = ledger.claim.bind(ledger);
  ledger.claim = (...args) => (claims++, claim(...args));
  const held = new Promise<void>(() => undefined); // completions never land in this test
  ledger.complete = () => held;
  ledger.completeAll = () => held;
  const sent: Array<{ to: string; m: RuntimeMessage }> = [];
  const workers: SimWorkers = new SimWorkers(1, (e) => runner.onWorker(e));
  const clock = new SimClock();
  const runner: JobRunner = new JobRunner({
    nodeId: 'n1', jobId, ref: { module: 'sim', export: 'default' }, ledger, workers, board: undefined, varNames: [],
    send: async (to, m) => void sent.push({ to, m }),
    peers: () => ['n0'],
    setVar: () => undefined,
    onEvent: () => undefined,
    rng: new Rng(3),
    clock,
    steal: { minBackoffMs: 1, maxBackoffMs: 8, requestTimeoutMs: 200 },
    ...(poolMemoryBytes !== undefined ? { poolMemoryBytes } : {}),
  });
  runner.adopt({ id: 'root', state: root, partial: undefined, version: 0 });
  runner.peersJoined();
  await flush();
  assert.equal(runner.load.running, 1, 'the task runs');
  // Steal requests sent before it arrived are forgotten; it ends, and its completion is being written.
  sent.length = 0;
  workers.step(1_000);
  await flush();
  clock.advance(50);
  await flush();
  assert.equal(runner.load.running, 0, 'the worker is idle');
  assert.equal(runner.idle, false, 'the completion is still being written');
  const offer = async () => {
    runner.onMessage('n0', { type: 'offer', job: jobId, task: { id: 'from-n0', state: { n: 3, open: [0], count: 0 }, partial: undefined, version: 0 } });
    await flush();
    return sent.find((s) => s.m.type === 'offer-ack');
  };
  return { runner, sent, offer, claims: () => claims };
}

describe('pool memory budget on the stealing path', () => {
  it('a node without room for one more task does not steal, and refuses an offer without claiming it', async () => {
    const { runner, sent, offer, claims } = await nodeCompletingOneTask('budget-thief', POOL_TASK_BYTES);
    try {
      assert.equal(sent.filter((s) => s.m.type === 'steal').length, 0, 'no steal request from a node over its budget');
      const ack = await offer();
      assert.deepEqual(ack?.m, { type: 'offer-ack', job: 'budget-thief', taskId: 'from-n0', claimed: false }, 'the offer is refused: the sender takes its task back');
      assert.equal(claims(), 0, 'the refused task was never claimed here');
      assert.equal(runner.load.pooled + runner.load.running, 0, 'nothing taken');
      runner.validate();
    } finally {
      runner.stop();
    }
  });

  it('a task it recovers over its budget goes on to another member, offered as on a drain', async () => {
    const { runner, sent } = await nodeCompletingOneTask('budget-recover', POOL_TASK_BYTES);
    try {
      runner.adopt({ id: 'orphan', state: { n: 3, open: [0], count: 0 }, partial: undefined, version: 2 });
      await flush();
      const offer = sent.find((s) => s.m.type === 'offer');
      assert.equal(offer?.to, 'n0', 'offered to the other member');
      assert.deepEqual(offer?.m.type === 'offer' && { id: offer.m.task.id, version: offer.m.task.version }, { id: 'orphan', version: 2 });
      assert.equal(runner.load.outgoing, 1, 'held as offered until answered (a refusal brings it back): not lost');
      assert.equal(runner.load.pooled + runner.load.running, 0);
      runner.validate();
    } finally {
      runner.stop();
    }
  });

  it('the same node without a budget steals, and claims what it is offered', async () => {
    const { runner, sent, offer, claims } = await nodeCompletingOneTask('budget-none', undefined);
    try {
      assert.ok(sent.some((s) => s.m.type === 'steal' && s.to === 'n0'), 'a steal request to the peer');
      await offer();
      assert.equal(claims(), 1, 'the offered task is claimed in the ledger');
    } finally {
      runner.stop();
    }
  });
});
