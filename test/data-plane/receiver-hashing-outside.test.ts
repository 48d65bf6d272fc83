/**
 * The receiver state machine hashing outside (the I/O layer hashes what it writes and reports the
 * digest): a good copy is accepted only after its digest; a corrupt one is reported, discarded and
 * fetched again from another holder; nothing is taken while the digest is awaited; a cancel then fails
 * the fetch.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BlobReceiver, type ReceiverAction } from '../../src/data/blob-receiver.js';
import { chunkRange, type ChunkMessage, type FetchRequest } from '../../src/data/transfer-protocol.js';

const CHUNK = 16 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Drives one receiver: holders answer fetches with every chunk of their copy at once. */
function run(blob: Buffer, copies: Record<string, Buffer>) {
  const receiver = new BlobReceiver({
    hash: sha(blob), size: blob.length, job: 'J', holders: Object.keys(copies), chunkBytes: CHUNK, window: 64, stallMs: 1000,
    xferPrefix: 'x', hashing: 'outside',
  });
  const kinds: string[] = [];
  let written: Buffer[] = [];
  const fetches: Array<{ to: string; m: FetchRequest }> = [];
  const apply = (actions: ReceiverAction[]) => {
    for (const a of actions) {
      kinds.push(a.kind);
      if (a.kind === 'write') written.push(a.data);
      if (a.kind === 'reset') written = [];
      if (a.kind === 'send' && a.message.type === 'blob.fetch') fetches.push({ to: a.to, m: a.message });
    }
  };
  const serve = (n: number) => {
    const { to, m } = fetches[n]!;
    for (let seq = m.from; seq * CHUNK < blob.length; seq++) {
      const { offset, length } = chunkRange(seq, blob.length, CHUNK);
      const chunk: ChunkMessage = { type: 'blob.chunk', xfer: m.xfer, seq, size: blob.length, data: copies[to]!.subarray(offset, offset + length) };
      apply(receiver.onChunk(to, chunk, 0));
    }
  };
  apply(receiver.start(0));
  return { receiver, kinds, written: () => Buffer.concat(written), fetches, serve, apply };
}

describe('blob receiver hashing outside', () => {
  it('accepts a copy only once its digest is reported, and takes nothing meanwhile', () => {
    const blob = randomBytes(5 * CHUNK + 7);
    const r = run(blob, { a: blob });
    r.serve(0);
    assert.equal(r.receiver.state, 'verifying');
    assert.deepStrictEqual(r.kinds.filter((k) => k === 'verify' || k === 'done'), ['verify']);
    assert.equal(r.receiver.deadline, undefined, 'no stall timer while the digest is computed');
    const late: ChunkMessage = { type: 'blob.chunk', xfer: r.fetches[0]!.m.xfer, seq: 0, size: blob.length, data: blob.subarray(0, CHUNK) };
    assert.deepStrictEqual(r.receiver.onChunk('a', late, 0), [], 'a chunk while verifying is ignored');
    assert.ok(r.written().equals(blob));
    r.apply(r.receiver.onDigest(sha(r.written()), 0));
    assert.equal(r.receiver.state, 'done');
    assert.equal(r.kinds.at(-1), 'done');
  });

  it('reports a corrupt copy by its digest, starts over and fetches it from another holder', () => {
    const blob = randomBytes(4 * CHUNK);
    const bad = Buffer.from(blob);
    bad[CHUNK + 3] = bad[CHUNK + 3]! ^ 1;
    const r = run(blob, { a: bad, b: blob });
    r.serve(0);
    r.apply(r.receiver.onDigest(sha(r.written()), 0));
    assert.deepStrictEqual(r.kinds.filter((k) => ['verify', 'corrupt', 'reset', 'done'].includes(k)), ['verify', 'corrupt', 'reset']);
    assert.equal(r.fetches[1]!.to, 'b', 'asked the other holder');
    assert.equal(r.fetches[1]!.m.from, 0, 'from the start');
    r.serve(1);
    r.apply(r.receiver.onDigest(sha(r.written()), 0));
    assert.equal(r.receiver.state, 'done');
    assert.ok(r.written().equals(blob));
  });

  it('fails on cancel while the digest is awaited; a late digest changes nothing', () => {
    const blob = randomBytes(2 * CHUNK);
    const r = run(blob, { a: blob });
    r.serve(0);
    r.apply(r.receiver.cancel('the caller left'));
    assert.equal(r.receiver.state, 'failed');
    assert.deepStrictEqual(r.receiver.onDigest(sha(blob), 0), []);
  });
});
