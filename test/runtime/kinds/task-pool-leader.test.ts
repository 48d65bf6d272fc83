/**
 * The task pool's leader recovers the tasks of vanished members; a recovery scan that fails (the
 * connection lost under load) is repeated rather than leaving those tasks to a dead owner. At the end it
 * folds the contributions and hands the result with the job's final variables to the reducer's `withVars`;
 * a reducer that throws ends the job as failed, saying so, instead of leaving it unfinished.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../../src/coord/embedded/embedded-server.js';
import { CoordError } from '../../../src/coord/errors.js';
import { GroupMembership } from '../../../src/coord/recipes/group-membership.js';
import { TerminationList } from '../../../src/coord/recipes/termination-detection.js';
import { encode } from '../../../src/util/codec.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../../src/runtime/pool/task-pool-spec.js';
import { TaskPoolLeaderDuties } from '../../../src/runtime/pool/task-pool-leader.js';
import { Ledger } from '../../../src/runtime/pool/ledger.js';
import type { JobOutcome } from '../../../src/runtime/job/outcome.js';
import type { ResultReducer } from '../../../src/runtime/worker/task.js';
import type { TaskSnapshot } from '../../../src/runtime/pool/task-snapshot.js';
import { waitFor } from '../../support/wait.js';

describe('task pool leader duties', () => {
  it('a recovery scan that fails is repeated: the root is still adopted', async () => {
    const server = new EmbeddedServer();
    const client = new EmbeddedClient(server, 600_000);
    const paths = jobPaths('rescan');
    const znodes = ledgerPaths(paths);
    await new TerminationList(client, znodes.termination).init('root', encode({ owner: '', state: { n: 1 }, partial: undefined }));
    const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
    const list = ledger.list.bind(ledger);
    let failures = 0;
    ledger.list = () => (failures++ === 0 ? Promise.reject(new CoordError('CONNECTION_LOSS', znodes.tasks)) : list());
    const members = new GroupMembership(client, paths.members);
    await members.join('n1');
    await members.watch();
    const adopted: TaskSnapshot[] = [];
    const duties = new TaskPoolLeaderDuties(client, paths, ledger, members, { initial: () => 0, combine: (a, b) => (a as number) + (b as number) }, (s) => adopted.push(s));
    try {
      duties.start();
      await waitFor(() => adopted.length > 0, 'the root to be recovered after the failed scan', 10_000);
      assert.ok(failures >= 2, 'the first scan failed and a second one ran');
      assert.deepEqual(adopted.map((s) => s.id), ['root']);
    } finally {
      duties.stop();
      members.stop();
    }
  });

  /** A job whose only task is the unowned root, on a fresh embedded server, with member n1 joined. */
  async function oneTaskJob(id: string) {
    const client = new EmbeddedClient(new EmbeddedServer(), 600_000);
    const paths = jobPaths(id);
    const znodes = ledgerPaths(paths);
    await new TerminationList(client, znodes.termination).init('root', encode({ owner: '', state: null, partial: undefined }));
    const ledger = new Ledger(client, { tasks: znodes.tasks, txns: znodes.txns }, 'n1');
    const members = new GroupMembership(client, paths.members);
    await members.join('n1');
    await members.watch();
    return { client, paths, ledger, members };
  }

  /** Runs a one-task job to its end under `reducer`: the root completes with `partial`; returns the outcome. */
  async function finishWith(reducer: ResultReducer<unknown>, partial: unknown, finalVars: () => Promise<Record<string, unknown>>): Promise<JobOutcome> {
    const { client, paths, ledger, members } = await oneTaskJob('final');
    const outcomes: JobOutcome[] = [];
    const duties = new TaskPoolLeaderDuties(client, paths, ledger, members, reducer, (s) => void ledger.complete(s.id, partial), async (o) => {
      outcomes.push(o);
      return true;
    }, finalVars);
    try {
      duties.start();
      await waitFor(() => outcomes.length > 0, 'the job to end', 10_000);
      assert.equal(outcomes.length, 1);
      return outcomes[0]!;
    } finally {
      duties.stop();
      members.stop();
    }
  }

  const sum = { initial: () => 0, combine: (a: unknown, b: unknown) => (a as number) + (b as number) };

  it('the folded result and the final variables go to the reducer\'s withVars; its answer is the result', async () => {
    const seen: unknown[] = [];
    const outcome = await finishWith({ ...sum, withVars: (r, vars) => (seen.push([r, vars]), (r as number) * 10 + (vars.best as number)) }, 4, async () => ({ best: 2 }));
    assert.deepEqual(seen, [[4, { best: 2 }]]);
    assert.equal(outcome.status === 'done' && outcome.value, 42);
  });

  it('a reducer that throws ends the job as failed, naming the reducer and the error', async () => {
    const outcome = await finishWith({ ...sum, withVars: () => { throw new Error('no incumbent'); } }, 4, async () => ({}));
    assert.deepEqual({ ...outcome, finishedAt: 0 }, { status: 'failed', error: 'the task type\'s result reducer failed: no incumbent', finishedAt: 0 });
    const folding = await finishWith({ initial: () => 0, combine: () => { throw new Error('not a number'); } }, 4, async () => ({}));
    assert.equal(folding.status === 'failed' && folding.error, 'the task type\'s result reducer failed: not a number');
  });

  it('a collection that fails is repeated: the result is still published, once', async () => {
    let attempts = 0;
    const outcome = await finishWith({ ...sum, withVars: (r) => r }, 4, async () => {
      if (attempts++ === 0) throw new CoordError('CONNECTION_LOSS', '/vars');
      return {};
    });
    assert.equal(attempts, 2);
    assert.equal(outcome.status === 'done' && outcome.value, 4);
  });

  it('a leader elected after its predecessor declared termination but died before publishing collects the result', async () => {
    const { client, paths, ledger, members } = await oneTaskJob('takeover');
    // The first leader completes the root and declares termination, then dies while publishing.
    let publishing = false;
    const first = new TaskPoolLeaderDuties(client, paths, ledger, members, sum, (s) => void ledger.complete(s.id, 5), async () => {
      publishing = true;
      return new Promise<boolean>(() => undefined);
    });
    const outcomes: JobOutcome[] = [];
    const next = new TaskPoolLeaderDuties(client, paths, ledger, members, sum, () => assert.fail('nothing is left to recover'), async (o) => {
      outcomes.push(o);
      return true;
    });
    try {
      first.start();
      await waitFor(() => publishing, 'the first leader to declare termination and start publishing', 10_000);
      first.stop();
      next.start();
      await waitFor(() => outcomes.length > 0, 'the next leader to publish the result', 10_000);
      assert.deepEqual(outcomes.map((o) => o.status === 'done' && { value: o.value, completions: o.completions }), [{ value: 5, completions: 1 }]);
    } finally {
      first.stop();
      next.stop();
      members.stop();
    }
  });
});
