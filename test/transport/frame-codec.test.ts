import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Packr } from 'msgpackr';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, FrameError } from '../../src/transport/frame-codec.js';
import type { Message } from '../../src/transport/types.js';

/** A frame with an arbitrary payload (what a broken or hostile peer could send). */
function rawFrame(payload: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length, 0);
  return Buffer.concat([header, payload]);
}

function roundTrip(message: Message): Message {
  const messages = new FrameDecoder().push(encodeFrame(message));
  assert.equal(messages.length, 1);
  return messages[0]!;
}

describe('frame codec', { timeout: 30_000 }, () => {
  it('round-trips varied messages', { timeout: 10_000 }, () => {
    const samples: Message[] = [
      { type: 'empty' },
      {
        type: 'nested',
        a: { b: { c: [1, 2.5, -3, null, true, false, 'x', { d: [] }] } },
        n: 2 ** 40,
        neg: -(2 ** 31) - 1,
        undef: undefined,
      },
      { type: 'binary', buffer: Buffer.from([0, 1, 2, 255]), bytes: new Uint8Array([9, 8, 7]), empty: Buffer.alloc(0) },
      { type: 'bigint', small: 5n, negative: -7n, int64: -(2n ** 63n), huge: 3n ** 100n, hugeNeg: -(5n ** 80n) },
      {
        type: 'map',
        m: new Map<unknown, unknown>([[1, 'one'], ['k', { inner: new Map([['x', [1n]]]) }], [true, null]]),
        plain: { '1': 'a plain object stays an object' },
      },
      { type: 'date', at: new Date(1_700_000_000_123), set: new Set(['a', 'b']) },
      { type: 'unicode ✓', text: 'héllo wörld — 日本語 🌊🚀', key: { 'ключ': 'значение', '': 'empty key' } },
      { type: 'keys', __proto__x: 1, 'a-b c': 2, constructor: 3 },
    ];
    for (const message of samples) assert.deepStrictEqual(roundTrip(message), message, message.type);
    const out = roundTrip(samples[2]!);
    assert.ok(Buffer.isBuffer(out.buffer), 'a Buffer comes back as a Buffer');
    assert.ok(out.bytes instanceof Uint8Array && !Buffer.isBuffer(out.bytes), 'a Uint8Array comes back as a Uint8Array');
    assert.ok(roundTrip(samples[4]!).m instanceof Map);
    assert.equal(Object.getPrototypeOf(roundTrip(samples[4]!).plain), Object.prototype);
  });

  it('round-trips a 1 MiB payload and many objects of the same shape', { timeout: 10_000 }, () => {
    const blob = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < blob.length; i++) blob[i] = (i * 31 + 7) & 0xff;
    const big = { type: 'blob', blob, tasks: Array.from({ length: 2000 }, (_, i) => ({ id: `t${i}`, depth: i % 9, args: [i, `${i}`] })) };
    const out = roundTrip(big);
    assert.ok((out.blob as Buffer).equals(blob));
    assert.deepStrictEqual(out.tasks, big.tasks);
  });

  it('decodes a frame split at every byte boundary', { timeout: 10_000 }, () => {
    const message = { type: 'split', text: 'bytes 🌊', n: 123456789n, list: [1, 2, 3], m: new Map([['a', 1]]) };
    const frame = encodeFrame(message);
    for (let cut = 0; cut <= frame.length; cut++) {
      const decoder = new FrameDecoder();
      const first = decoder.push(frame.subarray(0, cut));
      const second = decoder.push(frame.subarray(cut));
      assert.deepStrictEqual([...first, ...second], [message], `cut at ${cut}`);
      assert.equal(decoder.bufferedBytes, 0);
    }
    // And one byte at a time.
    const decoder = new FrameDecoder();
    const out: Message[] = [];
    for (const byte of frame) out.push(...decoder.push(Buffer.from([byte])));
    assert.deepStrictEqual(out, [message]);
  });

  it('decodes many frames from one chunk, and frames straddling chunks', { timeout: 10_000 }, () => {
    const messages = Array.from({ length: 1000 }, (_, i) => ({ type: i % 2 ? 'odd' : 'even', i, pad: 'x'.repeat(i % 50) }));
    const stream = Buffer.concat(messages.map((m) => encodeFrame(m)));
    assert.deepStrictEqual(new FrameDecoder().push(stream), messages);
    const decoder = new FrameDecoder();
    const out: Message[] = [];
    for (let at = 0; at < stream.length; at += 997) out.push(...decoder.push(stream.subarray(at, at + 997)));
    assert.deepStrictEqual(out, messages);
  });

  it('rejects an oversized length prefix before the body arrives', { timeout: 10_000 }, () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    const header = Buffer.alloc(4);
    header.writeUInt32BE(1025, 0);
    // Only the prefix has arrived: the decoder must fail now, not wait for (and buffer) 1025 bytes.
    assert.throws(() => decoder.push(header), (err: unknown) => err instanceof FrameError && /frame of 1025 bytes exceeds the limit of 1024/.test(err.message));
    assert.throws(() => decoder.push(Buffer.alloc(10)), FrameError, 'a failed decoder stays failed');
    assert.equal(decoder.bufferedBytes, 0);

    const huge = Buffer.from([0xff, 0xff, 0xff, 0xff]);
    assert.throws(() => new FrameDecoder().push(huge), new RegExp(`frame of ${0xffffffff} bytes exceeds the limit of ${DEFAULT_MAX_FRAME_BYTES}`));
    // A frame exactly at the limit is fine.
    const atLimit = encodeFrame({ type: 'x', s: 'y'.repeat(100) });
    assert.equal(new FrameDecoder({ maxFrameBytes: atLimit.length - 4 }).push(atLimit).length, 1);
  });

  it('refuses to encode a message larger than the limit', { timeout: 10_000 }, () => {
    assert.throws(() => encodeFrame({ type: 'big', data: Buffer.alloc(2000) }, 1000), /frame of \d+ bytes exceeds the limit of 1000/);
    assert.throws(() => encodeFrame({ type: 'fn', f: Symbol('no') } as unknown as Message), FrameError);
  });

  it('rejects garbage payloads', { timeout: 10_000 }, () => {
    for (const payload of [Buffer.alloc(0), Buffer.from([0x92, 0x01]), Buffer.from([0x01, 0x02]), Buffer.from([0xd4, 0x72, 0x00])]) {
      assert.throws(() => new FrameDecoder().push(rawFrame(payload)), (err: unknown) => err instanceof FrameError && /^malformed frame: /.test(err.message), payload.toString('hex'));
    }
  });

  it('rejects payloads that are not message objects', { timeout: 10_000 }, () => {
    const packr = new Packr({ mapsAsObjects: false });
    const plain = new Packr({ useRecords: false });
    for (const value of [42, 'text', null, [1, 2], { notype: 1 }, { type: 7 }, new Map([['type', 'x']]), new Date(0), Buffer.from('xy')]) {
      assert.throws(
        () => new FrameDecoder().push(rawFrame(packr.pack(value))),
        (err: unknown) => err instanceof FrameError && err.message === 'frame is not a message object with a string type',
        String(value),
      );
    }
    // A plain msgpack map is decoded as a Map, which is not a message either.
    assert.throws(() => new FrameDecoder().push(rawFrame(plain.pack({ type: 'x' }))), /not a message object/);
  });
});
