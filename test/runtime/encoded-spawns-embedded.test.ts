/**
 * Spawned children that reach the node as their encoded first records (not decoded on the node), on the
 * embedded backend: one stolen from the pool reaches the thief with the state it was spawned with and is
 * owned by the thief in the ledger; the rest migrate when their node drains; a node that crashes after part
 * of its children completed leaves exactly the others, and every child counts once (count and checksum).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { waitFor } from '../support/wait.js';
import { BATCH, crashAfterPartDone, expected, fanJob, type Tally } from './encoded-spawns.js';

const T = { timeout: 60_000 };

describe('encoded spawned children: steals, drain, crash (embedded)', () => {
  it('a thief gets a pooled child with its spawned state; on drain the rest migrate; exact result', T, async () => {
    const server = new EmbeddedServer();
    const job = fanJob(async () => new EmbeddedClient(server, 600_000), 'steal', 100);
    const j = await job;
    try {
      const n0 = await j.start('n0', 1, true);
      await waitFor(() => n0.workers.busy, 'n0 to recover the root and start it');
      n0.workers.step(); // the first batch: 32 encoded children in n0's pool, the root still running
      await waitFor(async () => (await j.owners()).size === 1 + BATCH, 'the batch to be recorded');
      const n1 = await j.start('n1', 2, false);
      await waitFor(() => n1.workers.busy, 'n1 to steal a child');
      const stolen = n1.workers.starts[0]!;
      assert.equal(stolen.encoded, false, 'a stolen child comes as its state, decoded on its node');
      assert.deepEqual(stolen.state, { root: false, next: 0, n: 0, value: 1 }, 'the oldest child, as it was spawned');
      assert.equal((await j.owners()).get(stolen.taskId), 'n1', 'the thief owns its record');
      // n0 drains: its root migrates (checkpointed), its pooled children go to n1.
      const drained = n0.runner.drain();
      n0.workers.step();
      await drained;
      const owners = await j.owners();
      assert.ok([...owners.values()].every((o) => o === 'n1'), `every live record is n1's: ${JSON.stringify([...owners])}`);
      assert.equal(owners.size, 1 + BATCH, 'the root and its first batch, nothing more, nothing lost');
      const outcome = await j.runToEnd();
      assert.deepEqual(outcome && { status: outcome.status, value: (outcome as { value: Tally }).value }, { status: 'done', value: expected(100) });
      assert.ok(n1.workers.starts.some((s) => s.encoded), 'children n1 spawned itself ran from their records');
    } finally {
      j.stop();
    }
  });

  it('a crash after part of a batch completed: exactly the others are recovered, each child counts once', T, async () => {
    const server = new EmbeddedServer();
    await crashAfterPartDone(async () => new EmbeddedClient(server, 600_000), async (c) => server.expire(c.sessionId));
  });
});
