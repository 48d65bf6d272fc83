/**
 * When a node asks for work: as soon as its workers are idle and nothing it holds can come back to
 * it — a completion still being written to the ledger is not a reason to wait (it brings no task
 * back), so the steal's round trip overlaps that write. Real JobRunner, Ledger and leader duties on
 * the embedded backend; simulated worker, time and peer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { GroupMembership } from '../../src/coord/recipes/group-membership.js';
import { TerminationList } from '../../src/coord/recipes/termination-detection.js';
import { decode, encode } from '../../src/util/codec.js';
import { TaskPoolLeaderDuties } from '../../src/runtime/pool/task-pool-leader.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import { JobRunner } from '../../src/runtime/pool/job-runner.js';
import type { JobOutcome } from '../../src/runtime/job/outcome.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { RuntimeMessage } from '../../src/runtime/pool/pool-messages.js';
import { Rng } from '../../src/util/rng.js';
import { SimClock } from './sim/sim-clock.js';
import { SimWorkers } from './sim/sim-workers.js';

const flush = async () => {
  for (let i = 0; i < 6; i++) await new Promise((r) => setImmediate(r));
};

describe('a node whose last completion is still being written', () => {
  it('asks a peer for work before the write lands, and is idle only after it', async () => {
    const server = new EmbeddedServer();
    const paths = jobPaths('steal-early');
    const znodes = ledgerPaths(paths);
    const client = new EmbeddedClient(server, 600_000);
    // The compositions tree of 4: 2⁴ nodes, one task (nobody splits it).
    await new TerminationList(client, znodes.termination).init('root', encode({ owner: '', state: { n: 4, open: [0], count: 0 }, partial: undefined }));
    const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
    // Completion writes wait for the test's go.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const complete = ledger.complete.bind(ledger);
    const completeAll = ledger.completeAll.bind(ledger);
    let completionsStarted = 0;
    ledger.complete = (...args) => (completionsStarted++, gate.then(() => complete(...args)));
    ledger.completeAll = (...args) => (completionsStarted++, gate.then(() => completeAll(...args)));

    const sent: Array<{ to: string; m: RuntimeMessage }> = [];
    const clock = new SimClock();
    const members = new GroupMembership(client, paths.members);
    const workers: SimWorkers = new SimWorkers(1, (e) => runner.onWorker(e));
    const runner: JobRunner = new JobRunner({
      nodeId: 'n1', jobId: 'steal-early', ref: { module: 'sim', export: 'default' }, ledger, workers, board: undefined, varNames: [],
      send: async (to, m) => void sent.push({ to, m }),
      peers: () => ['n0'],
      setVar: () => undefined,
      onEvent: () => undefined,
      rng: new Rng(7),
      clock,
      steal: { minBackoffMs: 1, maxBackoffMs: 8, requestTimeoutMs: 200 },
    });
    await members.join('n1');
    await members.watch();
    const duties = new TaskPoolLeaderDuties(client, paths, ledger, members, { initial: () => 0, combine: (a, b) => (a as number) + (b as number) }, (s) => runner.adopt(s));
    duties.start();
    runner.peersJoined();
    try {
      const deadline = Date.now() + 10_000;
      while (runner.load.running === 0) {
        assert.ok(Date.now() < deadline, 'the root task never started');
        await flush();
      }
      // Requests sent while the root was on its way here: n0 has nothing.
      for (const s of sent.splice(0)) if (s.m.type === 'steal') runner.onMessage('n0', { type: 'steal-empty', job: 'steal-early', requestId: s.m.requestId });
      workers.step(1_000); // the task ends: its completion goes to the (held) ledger write
      await flush();
      clock.advance(50); // past any back-off after those empty answers
      await flush();
      assert.equal(completionsStarted, 1, 'the completion is being written');
      const steals = sent.filter((s) => s.m.type === 'steal');
      assert.ok(steals.length > 0, 'a steal request went out while the completion was still being written');
      assert.equal(steals.at(-1)!.to, 'n0');
      assert.equal(runner.idle, false, 'a node with a completion in flight is not idle');

      release();
      while (!(await client.exists(paths.result))) {
        assert.ok(Date.now() < deadline, 'the job never ended');
        await flush();
      }
      assert.equal(runner.idle, true);
      const outcome = decode<JobOutcome>((await client.getData(paths.result)).data);
      assert.equal(outcome.status, 'done');
      assert.equal(outcome.value, 2 ** 4, 'every tree node (a composition of some m ≤ 4: 2⁴ of them) counted exactly once');
    } finally {
      duties.stop();
      runner.stop();
      members.stop();
    }
  });
});
