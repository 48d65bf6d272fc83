/**
 * Over real TcpTransports, a fetched blob's chunks arrive straight in the receiving store's shared
 * memory (placed by the transport's decoder, not reassembled and copied), hashed on the hashing thread,
 * and intact; and with hashing inline the same.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { BlobTransferService } from '../../src/data/blob-transfer.js';
import { hashOf } from '../../src/data/content-hash.js';
import { ObjectStore } from '../../src/data/object-store.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { Message } from '../../src/transport/types.js';
import { withDeadline } from '../support/wait.js';

const SECRET = randomBytes(32);
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function node(id: string, hashing?: 'thread' | 'inline') {
  const transport = new TcpTransport({ nodeId: id, secret: SECRET });
  await transport.start();
  const store = await ObjectStore.open();
  const service = new BlobTransferService({ transport, store, mayFetch: (peer) => peer === 'receiver', ...(hashing ? { hashing } : {}) });
  closers.push(async () => {
    await service.close();
    await transport.close();
    await store.close();
  });
  return { transport, store, service, peer: { nodeId: id, address: transport.address } };
}

describe('chunks placed in the store over TcpTransport', { timeout: 60_000 }, () => {
  for (const hashing of ['thread', 'inline'] as const) {
    it(`puts every chunk of a 12 MB blob where it belongs in the store's shared memory (hashing ${hashing})`, async () => {
      const holder = await node('holder');
      const receiver = await node('receiver', hashing);
      const blob = randomBytes(12 * 1024 * 1024 + 5);
      const { hash } = await holder.store.put(blob);
      const chunks: Message[] = [];
      receiver.transport.onMessage((_from, m) => {
        if (m.type === 'blob.chunk') chunks.push(m);
      });
      await withDeadline(receiver.service.fetch(hash, { size: blob.length, holders: [holder.peer], job: 'J' }), 'the fetch', 30_000);
      const stored = await receiver.store.get(hash);
      assert.ok(stored.equals(blob));
      assert.equal(hashOf(stored), hash);
      assert.equal(chunks.length, 13);
      for (const m of chunks) {
        const data = m.data as Buffer;
        assert.equal(data.buffer, stored.buffer, `chunk ${m.seq as number} arrived in the store's memory`);
        assert.equal(data.byteOffset - stored.byteOffset, (m.seq as number) * 1024 * 1024, `chunk ${m.seq as number} at its offset`);
      }
    });
  }
});
