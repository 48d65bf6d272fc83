/**
 * The ledger on its own: batched writes that touch one task several times, fencing of a node
 * whose task was claimed elsewhere, and exactly-once commits through injected connection losses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { decode, encode } from '../../src/util/codec.js';
import { Ledger, LostOwnership } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import { Rng } from '../../src/util/rng.js';

const paths = { tasks: '/job/tasks', txns: '/job/txns' };

async function setup() {
  const server = new EmbeddedServer();
  const a = new EmbeddedClient(server);
  const b = new EmbeddedClient(server);
  await mkdirp(a, paths.tasks);
  await mkdirp(a, paths.txns);
  await a.create(`${paths.tasks}/root`, encode({ owner: '', state: { n: 0 }, partial: undefined } satisfies TaskRecord));
  return { server, a, b, ledgerA: new Ledger(a, paths, 'A'), ledgerB: new Ledger(b, paths, 'B') };
}

async function results(client: EmbeddedClient): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const t of await client.getChildren(paths.txns)) out.push(...decode<{ results: unknown[] }>((await client.getData(`${paths.txns}/${t}`)).data).results);
  return out;
}

describe('ledger', () => {
  it('claims, splits one parent several times in one batch, and completes', async () => {
    const { a, ledgerA } = await setup();
    assert.equal(await ledgerA.claim({ id: 'root', state: { n: 0 }, partial: undefined, version: 0 }), true);
    // Issued together: they commit in batches, each split seeing the version the previous one wrote.
    await Promise.all([
      ledgerA.split('root', { state: { n: 1 }, partial: 1 }, 'c1', { n: 10 }),
      ledgerA.split('root', { state: { n: 2 }, partial: 2 }, 'c2', { n: 20 }),
      ledgerA.split('root', { state: { n: 3 }, partial: 3 }, 'c3', { n: 30 }),
      ledgerA.complete('c1', 100),
      ledgerA.checkpoint('root', { n: 4 }, 4),
    ]);
    const root = decode<TaskRecord>((await a.getData(`${paths.tasks}/root`)).data);
    assert.deepEqual(root, { owner: 'A', state: { n: 4 }, partial: 4 });
    assert.deepEqual((await a.getChildren(paths.tasks)).sort(), ['c2', 'c3', 'root']);
    await Promise.all([ledgerA.complete('c2', 200), ledgerA.complete('c3', 300), ledgerA.complete('root', 4)]);
    assert.deepEqual(await a.getChildren(paths.tasks), []);
    assert.deepEqual((await results(a)).sort(), [100, 200, 300, 4].sort());
    assert.ok(ledgerA.stats.transactions < 9, `batched (${ledgerA.stats.transactions} transactions for 9 events)`);
  });

  it('fences a node whose task was claimed by another: it can no longer split or complete it', async () => {
    const { a, ledgerA, ledgerB } = await setup();
    await ledgerA.claim({ id: 'root', state: {}, partial: undefined, version: 0 });
    const seen = await ledgerB.read('root');
    assert.equal(seen?.record.owner, 'A');
    assert.equal(await ledgerB.claim({ id: 'root', state: seen.record.state, partial: seen.record.partial, version: seen.version }), true);
    await assert.rejects(ledgerA.split('root', { state: {}, partial: 0 }, 'x', {}), LostOwnership);
    await assert.rejects(ledgerA.complete('root', 7), LostOwnership);
    assert.deepEqual(await a.getChildren(paths.tasks), ['root'], 'nothing of the fenced node committed');
    assert.deepEqual(await results(a), []);
    // A stale claim (old version) loses too.
    assert.equal(await ledgerA.claim({ id: 'root', state: {}, partial: undefined, version: 0 }), false);
    await ledgerB.complete('root', 1);
    assert.deepEqual(await results(a), [1]);
  });

  for (const seed of [1, 2, 3]) {
    it(`commits every event exactly once through connection losses before and after commit (seed ${seed})`, async () => {
      const { server, a } = await setup();
      const ledgerA = new Ledger(a, paths, 'A', 4); // small batches: many transactions to fault
      await ledgerA.claim({ id: 'root', state: {}, partial: undefined, version: 0 });
      const rng = new Rng(seed);
      const injected = { before: 0, after: 0 };
      server.injectFaults(a.sessionId, () => {
        if (!rng.chance(0.3)) return undefined;
        const when = rng.chance(0.5) ? 'before' : 'after';
        injected[when]++;
        return when;
      });
      const ops: Promise<void>[] = [];
      for (let i = 0; i < 200; i++) ops.push(ledgerA.split('root', { state: { i }, partial: i }, `c${i}`, { i }));
      for (let i = 0; i < 200; i++) ops.push(ledgerA.complete(`c${i}`, 1));
      await Promise.all(ops);
      await ledgerA.complete('root', 0);
      server.injectFaults(a.sessionId, undefined);
      assert.deepEqual(await a.getChildren(paths.tasks), []);
      const r = await results(a);
      assert.equal(r.length, 201, 'one contribution per completed task');
      assert.equal(r.reduce((x: number, y) => x + (y as number), 0), 200);
      assert.ok(injected.before > 0 && injected.after > 0, `both kinds of loss were injected (${JSON.stringify(injected)})`);
    });
  }
});
