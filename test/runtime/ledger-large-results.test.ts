/**
 * Result contributions too large for a transaction marker: a completion's own contribution and the folded
 * contribution of the tasks run inline after it are each stored in the data plane first, the marker carries
 * their references (and how many tasks the folded one stands for), and the reducer gets the values back.
 * Small contributions stay inline, with no data-plane write.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import type { BlobRef } from '../../src/data/blob-directory.js';
import { blobValueRef, INLINE_STATE_BYTES } from '../../src/data/blob-values.js';
import { decode, encode } from '../../src/util/codec.js';
import type { DurableBlobs } from '../../src/runtime/job/durable-blobs.js';
import { Ledger } from '../../src/runtime/pool/ledger.js';
import type { TaskRecord } from '../../src/runtime/worker/task-record.js';
import type { TxnMarker } from '../../src/runtime/pool/ledger-batches.js';

const paths = { tasks: '/job/tasks', txns: '/job/txns' };

/** A data plane in a map: stores by content hash. */
function mapBlobs(): DurableBlobs & { stored: Map<string, Buffer> } {
  const stored = new Map<string, Buffer>();
  return {
    stored,
    store: async (bytes) => {
      const hash = createHash('sha256').update(bytes).digest('hex');
      stored.set(hash, Buffer.from(bytes));
      return { hash, size: bytes.length } as BlobRef;
    },
    fetch: async (ref) => stored.get(ref.hash)!,
  };
}

describe('ledger: large result contributions', () => {
  it('stores a large contribution and a large folded inline one as blobs; the marker holds references', async () => {
    const client = new EmbeddedClient(new EmbeddedServer());
    await mkdirp(client, paths.tasks);
    await mkdirp(client, paths.txns);
    for (const id of ['a', 'b']) await client.create(`${paths.tasks}/${id}`, encode({ owner: '', state: {}, partial: undefined } satisfies TaskRecord));
    const blobs = mapBlobs();
    const ledger = new Ledger(client, paths, 'A', 64, blobs);
    for (const id of ['a', 'b']) assert.equal(await ledger.claim({ id, state: {}, partial: undefined, version: 0 }), true);
    const big = (c: string) => c.repeat(INLINE_STATE_BYTES + 10);
    await ledger.complete('a', { text: big('a') }, { tasks: 3, value: { text: big('i') } });
    await ledger.complete('b', 7);
    assert.deepEqual(await client.getChildren(paths.tasks), []);
    const markers = await Promise.all((await client.getChildren(paths.txns)).map(async (t) => decode<TxnMarker>((await client.getData(`${paths.txns}/${t}`)).data)));
    const counted: Array<[unknown, number]> = [];
    for (const m of markers) for (const [i, r] of m.results.entries()) counted.push([r, m.tasks?.[i] ?? 1]);
    assert.equal(counted.length, 3);
    assert.equal(counted.filter(([r]) => blobValueRef(r) !== undefined).length, 2, 'both large contributions are references');
    assert.equal(blobs.stored.size, 2, 'the small one was not stored');
    const resolved = await Promise.all(counted.map(async ([r, tasks]) => [await ledger.resolveResult(r), tasks] as const));
    assert.deepEqual(resolved.filter(([, tasks]) => tasks === 3), [[{ text: big('i') }, 3]], 'the folded inline contribution, for 3 tasks');
    const single = resolved.filter(([, tasks]) => tasks === 1).map(([v]) => JSON.stringify(v));
    assert.deepEqual(new Set(single), new Set([JSON.stringify(7), JSON.stringify({ text: big('a') })]));
  });
});
