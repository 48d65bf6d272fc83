/**
 * Intermediate files between members travel as chunks of at most CHUNK_BYTES: a file of several
 * chunks is reassembled bit for bit whatever order they arrive in, one chunk costs no copy, and
 * chunks that do not fit the file are refused naming what is wrong.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { CHUNK_BYTES, chunksOf, FileAssembly } from '../../../src/frameworks/workflow/file-chunks.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('file chunks', () => {
  it('a file of 2 chunks and a bit is reassembled bit for bit, in any arrival order', () => {
    const file = new Uint8Array(2 * CHUNK_BYTES + 5);
    for (let i = 0; i < file.length; i++) file[i] = (i * 31 + (i >>> 11)) & 0xff;
    const chunks = chunksOf(file);
    assert.deepEqual(chunks.map((c) => [c.offset, c.bytes.length, c.total]), [[0, CHUNK_BYTES, file.length], [CHUNK_BYTES, CHUNK_BYTES, file.length], [2 * CHUNK_BYTES, 5, file.length]]);
    const got = new FileAssembly();
    assert.equal(got.add(chunks[2]!), undefined);
    assert.equal(got.add(chunks[0]!), undefined);
    const whole = got.add(chunks[1]!);
    assert.ok(whole, 'complete after the last chunk');
    assert.equal(sha(whole), sha(file));
  });

  it('a small file is one chunk, handed over as received; an empty file is one empty chunk', () => {
    const chunks = chunksOf(new Uint8Array([1, 2, 3]));
    assert.equal(chunks.length, 1);
    assert.equal(new FileAssembly().add(chunks[0]!), chunks[0]!.bytes);
    const empty = chunksOf(new Uint8Array(0));
    assert.deepEqual(empty.map((c) => [c.offset, c.total, c.bytes.length]), [[0, 0, 0]]);
    assert.equal(new FileAssembly().add(empty[0]!)?.length, 0);
  });

  it('refuses a chunk past the end of its file and one that disagrees on the size', () => {
    assert.throws(() => new FileAssembly().add({ offset: 8, total: 10, bytes: new Uint8Array(4) }), /chunk at 8 of 4 bytes ends past the file's 10/);
    const got = new FileAssembly();
    got.add({ offset: 0, total: 10, bytes: new Uint8Array(4) });
    assert.throws(() => got.add({ offset: 4, total: 12, bytes: new Uint8Array(4) }), /12 bytes, an earlier one 10/);
  });
});
