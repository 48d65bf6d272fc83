/**
 * The ledger's batch of spawned children (Ledger.spawned): the children's records and the parent's
 * checkpoint or completion commit together or not at all, a fenced node commits none of them, and
 * through injected connection losses every batch commits exactly once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { decode, encode } from '../../src/util/codec.js';
import { Ledger, LostOwnership } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TxnMarker } from '../../src/runtime/pool/ledger-batches.js';
import { Rng } from '../../src/util/rng.js';

const paths = { tasks: '/job/tasks', txns: '/job/txns' };

async function setup() {
  const server = new EmbeddedServer();
  const a = new EmbeddedClient(server);
  const b = new EmbeddedClient(server);
  await mkdirp(a, paths.tasks);
  await mkdirp(a, paths.txns);
  await a.create(`${paths.tasks}/root`, encode({ owner: '', state: { next: 0 }, partial: undefined } satisfies TaskRecord));
  return { server, a, b };
}

async function results(client: EmbeddedClient): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const t of await client.getChildren(paths.txns)) out.push(...decode<{ results: unknown[] }>((await client.getData(`${paths.txns}/${t}`)).data).results);
  return out;
}

async function record(client: EmbeddedClient, id: string): Promise<{ record: TaskRecord; version: number }> {
  const { data, stat } = await client.getData(`${paths.tasks}/${id}`);
  return { record: decode<TaskRecord>(data), version: stat.version };
}

/** Counts a fault as it is injected. */
function count<K extends string>(tally: Record<K, number>, what: K): K {
  tally[what]++;
  return what;
}

const kids = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: `c${from + i}`, state: { value: from + i } }));

describe('ledger: children spawned in batches', () => {
  it('records a batch with the parent\'s checkpoint, and one with its completion', async () => {
    const { a } = await setup();
    const ledger = new Ledger(a, paths, 'A');
    assert.equal(await ledger.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 }), true);
    await ledger.spawned('root', kids(0, 3), { checkpoint: { state: { next: 3 }, partial: 7 } });
    assert.deepEqual((await a.getChildren(paths.tasks)).sort(), ['c0', 'c1', 'c2', 'root']);
    assert.deepEqual(await record(a, 'root'), { record: { owner: 'A', state: { next: 3 }, partial: 7 }, version: 2 });
    for (const i of [0, 1, 2]) assert.deepEqual(await record(a, `c${i}`), { record: { owner: 'A', state: { value: i }, partial: undefined }, version: 0 });
    assert.equal(ledger.versionOf('c1'), 0, 'the node owns the children it recorded');
    // The last batch rides with the parent's completion: its record goes, its contribution is in the marker.
    await ledger.spawned('root', kids(3, 2), { partial: 10 });
    assert.deepEqual((await a.getChildren(paths.tasks)).sort(), ['c0', 'c1', 'c2', 'c3', 'c4']);
    assert.deepEqual(await results(a), [10]);
    assert.equal(ledger.versionOf('root'), undefined);
    assert.equal(ledger.stats.transactions, 3, 'one transaction per batch (and the claim)');
  });

  it('commits the folded contribution of children run inline with their parent, counted as that many tasks', async () => {
    const { a } = await setup();
    const ledger = new Ledger(a, paths, 'A');
    await ledger.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 });
    await Promise.all([
      ledger.spawned('root', kids(0, 2), { partial: 1, inline: { tasks: 3, value: 30 } }),
      ledger.complete('c0', 4),
      ledger.complete('c1', 6, { tasks: 2, value: 50 }),
    ]);
    assert.deepEqual(await a.getChildren(paths.tasks), []);
    // Every contribution with the number of tasks it stands for (1 where the marker says nothing).
    const counted: Array<[unknown, number]> = [];
    for (const t of await a.getChildren(paths.txns)) {
      const m = decode<TxnMarker>((await a.getData(`${paths.txns}/${t}`)).data);
      m.results.forEach((r, i) => counted.push([r, m.tasks?.[i] ?? 1]));
    }
    assert.deepEqual(counted.sort((x, y) => (x[0] as number) - (y[0] as number)), [[1, 1], [4, 1], [6, 1], [30, 3], [50, 2]]);
  });

  it('a node whose parent task was claimed elsewhere records none of the batch', async () => {
    const { a, b } = await setup();
    const ledgerA = new Ledger(a, paths, 'A');
    const ledgerB = new Ledger(b, paths, 'B');
    await ledgerA.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 });
    const seen = await ledgerB.read('root');
    assert.equal(await ledgerB.claim({ id: 'root', state: seen!.record.state, partial: seen!.record.partial, version: seen!.version }), true);
    await assert.rejects(ledgerA.spawned('root', kids(0, 5), { checkpoint: { state: { next: 5 }, partial: 0 } }), LostOwnership);
    await assert.rejects(ledgerA.spawned('root', kids(5, 5), { partial: 1 }), LostOwnership);
    assert.deepEqual(await a.getChildren(paths.tasks), ['root'], 'no child of the fenced node exists');
    assert.deepEqual(await results(a), []);
  });

  it('completions written together commit all or none: a lost task refuses the group, one by one the others commit', async () => {
    const { a, b } = await setup();
    const ledgerA = new Ledger(a, paths, 'A');
    await ledgerA.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 });
    await ledgerA.spawned('root', kids(0, 3), { partial: 0 });
    // Node B takes c1 over (a recovery or a transfer).
    assert.equal(await new Ledger(b, paths, 'B').claim({ id: 'c1', state: { value: 1 }, partial: undefined, version: 0 }), true);
    const all = [0, 1, 2].map((i) => ({ taskId: `c${i}`, partial: 10 + i }));
    await assert.rejects(ledgerA.completeAll(all), LostOwnership);
    assert.deepEqual((await a.getChildren(paths.tasks)).sort(), ['c0', 'c1', 'c2'], 'nothing of the refused group committed');
    const each = await Promise.allSettled(all.map((c) => ledgerA.complete(c.taskId, c.partial)));
    assert.deepEqual(each.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(await a.getChildren(paths.tasks), ['c1']);
    assert.deepEqual((await results(a)).sort(), [0, 10, 12]);
  });

  for (const seed of [1, 2, 3]) {
    it(`commits every batch exactly once through connection losses before and after commit (seed ${seed})`, async () => {
      const { server, a } = await setup();
      const ledger = new Ledger(a, paths, 'A', 4); // small batches of groups: many transactions to fault
      await ledger.claim({ id: 'root', state: { next: 0 }, partial: undefined, version: 0 });
      const rng = new Rng(seed);
      // Three writes in ten lose the connection: half before the server applies them, half after (the reply is lost).
      const injected = { before: 0, after: 0 };
      server.injectFaults(a.sessionId, () => (rng.chance(0.3) ? count(injected, rng.pick(['before', 'after'] as const)) : undefined));
      // A root spawning 40 batches of 1–32 children, its last batch with its completion; every child completes with its value.
      const writes: Promise<void>[] = [];
      let next = 0;
      for (let b = 0; b < 40; b++) {
        const batch = kids(next, rng.int(1, 32));
        next += batch.length;
        writes.push(ledger.spawned('root', batch, b < 39 ? { checkpoint: { state: { next }, partial: 0 } } : { partial: 0 }));
      }
      await Promise.all(writes);
      await Promise.all(Array.from({ length: next }, (_, i) => ledger.complete(`c${i}`, i + 1)));
      server.injectFaults(a.sessionId, undefined);
      assert.deepEqual(await a.getChildren(paths.tasks), []);
      const r = await results(a);
      assert.equal(r.length, next + 1, 'one contribution per task');
      assert.equal(r.reduce((x: number, y) => x + (y as number), 0), (next * (next + 1)) / 2, 'checksum');
      assert.ok(injected.before > 0 && injected.after > 0, `both kinds of loss were injected (${JSON.stringify(injected)})`);
    });
  }
});
