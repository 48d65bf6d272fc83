/**
 * A task that spawns 200 children of 30 KB state each at once (6 MB in one burst, every record far
 * under 1 MiB): the ledger must split the burst into requests ZooKeeper accepts, on either backend,
 * and refuse a single record that can never fit with an error naming the task and its size.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { CoordError } from '../../src/coord/errors.js';
import { MAX_REQUEST_BYTES, requestBytes } from '../../src/coord/request-size.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import type { CoordClient, Op } from '../../src/coord/types.js';
import { decode, encode } from '../../src/util/codec.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import { useBackend, type Backend } from '../coord/backends.js';
import { withDeadline } from '../support/wait.js';

const T = { timeout: 120_000 };
const CHILDREN = 200;
const STATE_BYTES = 30_000;

/** Records the size of every multi the ledger sends. */
function spyOnRequests(client: CoordClient): number[] {
  const sizes: number[] = [];
  const multi = client.multi.bind(client);
  client.multi = (ops: readonly Op[]) => {
    sizes.push(requestBytes(ops, true));
    return multi(ops);
  };
  return sizes;
}

async function freshLedger(client: CoordClient) {
  const root = `/burst/${randomUUID()}`;
  const paths = { tasks: `${root}/tasks`, txns: `${root}/txns` };
  await mkdirp(client, paths.tasks);
  await mkdirp(client, paths.txns);
  await client.create(`${paths.tasks}/root`, encode({ owner: '', state: {}, partial: undefined } satisfies TaskRecord));
  const ledger = new Ledger(client, paths, 'N1');
  assert.equal(await ledger.claim({ id: 'root', state: {}, partial: undefined, version: 0 }), true);
  return { ledger, paths };
}

export function ledgerBurstSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`ledger batches capped in bytes: ${name}`, () => {
    const { open } = useBackend(makeBackend, 10_000);

    it('commits a burst of 200 children of 30 KB state in requests under the limit, results exact', T, async () => {
      const client = await open();
      const { ledger, paths } = await freshLedger(client);
      const sizes = spyOnRequests(client);
      const splits = Array.from({ length: CHILDREN }, (_, i) =>
        ledger.split('root', { state: { spawned: i + 1 }, partial: 0 }, `c${i}`, { i, blob: Buffer.alloc(STATE_BYTES, i % 256) }));
      await withDeadline(Promise.all(splits), 'the burst to commit', 90_000);
      assert.equal((await client.getChildren(paths.tasks)).length, CHILDREN + 1);
      const child = decode<TaskRecord>((await client.getData(`${paths.tasks}/c199`)).data);
      assert.equal((child.state as { blob: Buffer }).blob.length, STATE_BYTES);
      assert.ok(sizes.length >= Math.ceil((CHILDREN * STATE_BYTES) / MAX_REQUEST_BYTES), `split over several requests (${sizes.length})`);
      assert.ok(sizes.every((b) => b <= MAX_REQUEST_BYTES), `every request within the limit: ${sizes.join(', ')}`);
      await withDeadline(Promise.all([...splits.keys()].map((i) => ledger.complete(`c${i}`, i)).concat(ledger.complete('root', -1))), 'completions');
      assert.deepEqual(await client.getChildren(paths.tasks), []);
      const results: number[] = [];
      for (const t of await client.getChildren(paths.txns)) results.push(...decode<{ results: number[] }>((await client.getData(`${paths.txns}/${t}`)).data).results);
      assert.deepEqual(results.sort((a, b) => a - b), [-1, ...Array.from({ length: CHILDREN }, (_, i) => i)]);
    });

    it('refuses one record that can never fit, naming the task and size; the rest of its burst commits', T, async () => {
      const client = await open();
      const { ledger, paths } = await freshLedger(client);
      const small = ledger.split('root', { state: {}, partial: 0 }, 'small-1', { n: 1 });
      const huge = ledger.split('root', { state: {}, partial: 0 }, 'huge', { blob: Buffer.alloc(MAX_REQUEST_BYTES) });
      const after = ledger.split('root', { state: {}, partial: 0 }, 'small-2', { n: 2 });
      await assert.rejects(huge, (err: unknown) => {
        assert.ok(err instanceof CoordError && err.code === 'BAD_ARGUMENTS', String(err));
        assert.match(err.message, /task root needs a request of \d{7} bytes, over the limit of \d+ bytes/);
        return true;
      });
      await withDeadline(Promise.all([small, after]), 'the small splits');
      assert.deepEqual((await client.getChildren(paths.tasks)).sort(), ['root', 'small-1', 'small-2']);
      assert.equal(client.state, 'connected');
    });
  });
}
