/**
 * Blob transfer on real TcpTransports over loopback: a large blob arrives intact; a holder that dies
 * mid-transfer or whose disk copy is corrupt is replaced by another; a non-member is refused; limits
 * are refused before anything is sent.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { BlobTransferService } from '../../src/data/blob-transfer.js';
import { hashOf } from '../../src/data/content-hash.js';
import { DataError } from '../../src/data/data-error.js';
import { ObjectStore, type ObjectStoreOptions } from '../../src/data/object-store.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { PeerAddress } from '../../src/transport/types.js';
import { withDeadline } from '../support/wait.js';

const T = { timeout: 120_000 };
const MB = 1024 * 1024;
const SECRET = randomBytes(32);

interface TestNode {
  id: string;
  transport: TcpTransport;
  store: ObjectStore;
  service: BlobTransferService;
  peer: PeerAddress;
}

const nodes: TestNode[] = [];
after(async () => {
  for (const n of nodes) {
    await n.service.close();
    await n.transport.close();
    await n.store.close();
  }
});

async function node(id: string, opts: { store?: ObjectStoreOptions; members?: Set<string> } = {}): Promise<TestNode> {
  const transport = new TcpTransport({ nodeId: id, secret: SECRET });
  await transport.start();
  const store = await ObjectStore.open(opts.store);
  const members = opts.members ?? new Set(['a', 'b', 'c', 'd']);
  const service = new BlobTransferService({ transport, store, mayFetch: (peer, _hash, job) => job === 'J' && members.has(peer), stallMs: 2_000 });
  const n = { id, transport, store, service, peer: { nodeId: id, address: transport.address } };
  nodes.push(n);
  return n;
}

describe('blob transfer over TcpTransport (loopback)', () => {
  it('moves a 50 MB blob intact, chunk by chunk', T, async () => {
    const a = await node('a');
    const c = await node('c');
    const blob = randomBytes(50 * MB);
    const { hash } = await a.store.put(blob, 'input');
    const info = await withDeadline(c.service.fetch(hash, { size: blob.length, holders: [a.peer], job: 'J' }), 'the fetch', 60_000);
    assert.equal(info.hash, hash);
    const got = await c.store.get(hash);
    assert.equal(hashOf(got), hash);
    assert.ok(got.buffer instanceof SharedArrayBuffer, 'arrived straight into shared memory');
    assert.equal(c.service.stats.bytesIn, blob.length);
    assert.equal(a.service.stats.bytesOut, blob.length, 'sent once');
    assert.equal(a.service.serving, 0, 'the holder forgot the finished transfer');
    // A second fetch of a held blob does not touch the network.
    await c.service.fetch(hash, { size: blob.length, holders: [a.peer], job: 'J' });
    assert.equal(a.service.stats.served, 1);
  });

  it('continues from another holder when the first dies mid-transfer', T, async () => {
    const a = await node('a');
    const b = await node('b');
    const c = await node('c');
    const blob = randomBytes(20 * MB);
    const { hash } = await a.store.put(blob);
    await b.store.put(blob);
    let chunksFromA = 0;
    c.transport.onMessage((from, m) => {
      if (from === 'a' && m.type === 'blob.chunk' && ++chunksFromA === 3) void a.transport.close();
    });
    await withDeadline(c.service.fetch(hash, { size: blob.length, holders: [a.peer, b.peer], job: 'J' }), 'the fetch', 60_000);
    assert.equal(hashOf(await c.store.get(hash)), hash);
    assert.ok(chunksFromA >= 3, 'a sent part of it');
    assert.equal(b.service.stats.served, 1, 'b was asked for the rest');
    assert.ok(b.service.stats.bytesOut < blob.length, 'b sent only what was missing');
  });

  it('fails the fetch naming the holder when the only holder dies mid-transfer, and keeps nothing of it', T, async () => {
    const a = await node('a');
    const c = await node('c');
    const blob = randomBytes(20 * MB);
    const { hash } = await a.store.put(blob);
    let chunksFromA = 0;
    c.transport.onMessage((from, m) => {
      if (from === 'a' && m.type === 'blob.chunk' && ++chunksFromA === 3) void a.transport.close();
    });
    const fetch = c.service.fetch(hash, { size: blob.length, holders: [a.peer], job: 'J', name: 'job input' });
    await assert.rejects(withDeadline(fetch, 'the failing fetch', 60_000), (err: unknown) => {
      assert.ok(err instanceof DataError && err.code === 'UNAVAILABLE', String(err));
      assert.match(err.message, /job J\) could not be fetched from a: (unreachable|sent nothing)/);
      return true;
    });
    assert.ok(chunksFromA >= 3 && chunksFromA < 20, `a sent part of it (${chunksFromA} chunks)`);
    assert.equal(c.store.has(hash), false);
  });

  it('detects a copy corrupted in the holder\'s memory (hashed on the hashing thread): alone it fails naming the holder, with another holder the fetch completes', T, async () => {
    const a = await node('a');
    const b = await node('b');
    const c = await node('c');
    const blob = randomBytes(12 * MB + 5);
    const { hash } = await a.store.put(blob);
    await b.store.put(blob);
    const held = await a.store.get(hash);
    held[7 * MB + 3] = held[7 * MB + 3]! ^ 0x40;
    const corrupt: string[] = [];
    c.store.events.on('corrupt', (e) => corrupt.push(e.where));
    await assert.rejects(withDeadline(c.service.fetch(hash, { size: blob.length, holders: [a.peer], job: 'J' }), 'the fetch from a', 60_000), (err: unknown) => {
      assert.ok(err instanceof DataError && err.code === 'UNAVAILABLE', String(err));
      assert.match(err.message, /a: sent a corrupt copy \(content hashes to [0-9a-f]{12}\)/);
      return true;
    });
    assert.equal(c.store.has(hash), false);
    await withDeadline(c.service.fetch(hash, { size: blob.length, holders: [a.peer, b.peer], job: 'J' }), 'the fetch from a and b', 60_000);
    assert.ok((await c.store.get(hash)).equals(blob));
    assert.deepEqual(corrupt, ['arrival', 'arrival']);
    assert.equal(c.service.stats.corruptArrivals, 2);
  });

  it('rejects a copy corrupted on the holder\'s disk and fetches it from another; the holder discards its copy', T, async () => {
    const a = await node('a', { store: { memoryBytes: 0 } });
    const b = await node('b');
    const c = await node('c');
    const blob = randomBytes(3 * MB);
    const { hash } = await a.store.put(blob);
    await b.store.put(blob);
    const file = path.join(a.store.dir, hash);
    const content = await readFile(file);
    content[MB + 17] = content[MB + 17]! ^ 1;
    await writeFile(file, content);
    const corrupt: string[] = [];
    c.store.events.on('corrupt', (e) => corrupt.push(e.where));
    await withDeadline(c.service.fetch(hash, { size: blob.length, holders: [a.peer, b.peer], job: 'J' }), 'the fetch', 60_000);
    assert.ok((await c.store.get(hash)).equals(blob));
    assert.deepEqual(corrupt, ['arrival']);
    assert.equal(c.service.stats.corruptArrivals, 1);
    assert.equal(a.store.has(hash), false, 'the holder found its disk copy bad as it sent it');
  });

  it('refuses a peer that is not a member of the blob\'s job', T, async () => {
    const a = await node('a', { members: new Set(['b']) });
    const c = await node('c');
    const { hash } = await a.store.put(randomBytes(100_000));
    await assert.rejects(c.service.fetch(hash, { size: 100_000, holders: [a.peer], job: 'J' }), (err: unknown) => {
      assert.ok(err instanceof DataError && err.code === 'REFUSED', String(err));
      assert.match(err.message, /node c may not fetch blob [0-9a-f]{12} for job J/);
      return true;
    });
    assert.equal(a.service.stats.refused, 1);
    assert.equal(a.service.stats.bytesOut, 0);
    assert.equal(c.store.has(hash), false);
  });

  it('refuses a blob over the receiver\'s limits before asking any holder', T, async () => {
    const a = await node('a');
    const c = await node('c', { store: { maxObjectBytes: MB } });
    const { hash } = await a.store.put(randomBytes(2 * MB));
    await assert.rejects(c.service.fetch(hash, { size: 2 * MB, holders: [a.peer], job: 'J', name: 'job input' }), /job input [0-9a-f]{12} of 2097152 bytes exceeds the per-object maximum of 1048576 bytes/);
    assert.equal(a.service.stats.served + a.service.stats.refused, 0, 'no request reached the holder');
  });
});
