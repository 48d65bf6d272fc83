/**
 * Frames with an attachment (lent bytes beside a msgpack header): the parts the sender writes, the
 * decoder that copies the bytes straight into a placer's destination, and malformed or truncated
 * attachment frames from a peer, refused with a clear error.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Packr } from 'msgpackr';
import { lend, MAX_ATTACHMENT_HEADER_BYTES } from '../../src/transport/attachment.js';
import { encodeFrameParts, FrameDecoder, FrameError } from '../../src/transport/frame-codec.js';
import type { InboundFrame, Message } from '../../src/transport/types.js';

const packr = new Packr({ mapsAsObjects: false, moreTypes: true, useBigIntExtension: true });

/** An attachment frame written by hand: marker, header length as announced, header bytes, attachment bytes. */
function attachmentFrame(header: Buffer, attachment: Buffer, opts: { headerLength?: number; payloadLength?: number } = {}): Buffer {
  const preamble = Buffer.alloc(9);
  preamble.writeUInt32BE(opts.payloadLength ?? 5 + header.length + attachment.length, 0);
  preamble[4] = 0xc1;
  preamble.writeUInt32BE(opts.headerLength ?? header.length, 5);
  return Buffer.concat([preamble, header, attachment]);
}

function refused(frame: Buffer, reason: RegExp, what: string): void {
  const decoder = new FrameDecoder();
  assert.throws(() => decoder.push(frame), (err: unknown) => err instanceof FrameError && reason.test(err.message), what);
  assert.throws(() => decoder.push(Buffer.alloc(1)), FrameError, `${what}: a failed decoder stays failed`);
}

describe('attachment frames', { timeout: 30_000 }, () => {
  it('sends lent bytes as their own part (not copied) and decodes the same message', () => {
    const data = randomBytes(100_000);
    const message = { type: 'blob.chunk', xfer: 'x.1', seq: 7, size: 1e6, data: lend(data) };
    const parts = encodeFrameParts(message);
    assert.equal(parts.length, 2);
    assert.equal(parts[1], data, 'the attachment is the lent Buffer itself');
    assert.ok(parts[0]!.length < 200, 'the first part holds only the prefix and header');
    const [out] = new FrameDecoder().push(Buffer.concat(parts));
    assert.deepStrictEqual(out, { type: 'blob.chunk', xfer: 'x.1', seq: 7, size: 1e6, data });
    assert.ok(Buffer.isBuffer(out!.data));
  });

  it('frames bytes that were not lent as before: one part, copied at once', () => {
    const data = Buffer.from([1, 2, 3]);
    const parts = encodeFrameParts({ type: 't', data });
    assert.equal(parts.length, 1);
    data[0] = 9;
    assert.deepStrictEqual(new FrameDecoder().push(parts[0]!), [{ type: 't', data: Buffer.from([1, 2, 3]) }]);
  });

  it('decodes attachment frames split at every byte boundary, between ordinary frames', () => {
    const first = { type: 'a', n: 1 };
    const second = { type: 'b', data: lend(Buffer.from('attached bytes')), tag: 'x' };
    const third = { type: 'c', empty: lend(Buffer.alloc(0)) };
    const stream = Buffer.concat([...encodeFrameParts(first), ...encodeFrameParts(second), ...encodeFrameParts(third)]);
    const expected = [first, { type: 'b', tag: 'x', data: Buffer.from('attached bytes') }, { type: 'c', empty: Buffer.alloc(0) }];
    for (let cut = 0; cut <= stream.length; cut++) {
      const decoder = new FrameDecoder();
      const out = [...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))];
      assert.deepStrictEqual(out, expected, `cut at ${cut}`);
      assert.equal(decoder.bufferedBytes, 0);
    }
    const decoder = new FrameDecoder();
    const out: Message[] = [];
    for (const byte of stream) out.push(...decoder.push(Buffer.from([byte])));
    assert.deepStrictEqual(out, expected);
  });

  it('copies an attachment straight into the destination its placer chose', () => {
    const data = randomBytes(300_000);
    const stream = Buffer.concat(encodeFrameParts({ type: 'chunk', seq: 3, data: lend(data) }));
    const memory = Buffer.alloc(1_000_000);
    const seen: Array<{ header: Message; field: string; length: number }> = [];
    const decoder = new FrameDecoder({
      placer: (header, field, frame) => {
        seen.push({ header: { ...header }, field, length: frame.length });
        return memory.subarray(500_000, 500_000 + frame.length);
      },
    });
    const out: Message[] = [];
    for (let at = 0; at < stream.length; at += 65_536) out.push(...decoder.push(stream.subarray(at, at + 65_536)));
    assert.deepStrictEqual(seen, [{ header: { type: 'chunk', seq: 3 }, field: 'data', length: data.length }]);
    assert.equal(out.length, 1);
    const got = out[0]!.data as Buffer;
    assert.ok(got.equals(data));
    assert.equal(got.buffer, memory.buffer, 'the message holds the destination itself');
    assert.equal(got.byteOffset, memory.byteOffset + 500_000);
    assert.ok(memory.subarray(500_000, 800_000).equals(data));
    assert.equal(decoder.bufferedBytes, 0);
  });

  it('puts the bytes in private memory when the placer declines or offers the wrong length', () => {
    const data = randomBytes(1000);
    for (const offer of [undefined, Buffer.alloc(999)]) {
      const decoder = new FrameDecoder({ placer: () => offer });
      const [out] = decoder.push(Buffer.concat(encodeFrameParts({ type: 'x', data: lend(data) })));
      assert.ok((out!.data as Buffer).equals(data));
      if (offer) assert.ok(offer.every((b) => b === 0), 'a destination of the wrong length is left alone');
    }
  });

  it('stops writing a destination the placer takes back mid-frame, and still delivers every byte', () => {
    const data = randomBytes(200_000);
    const stream = Buffer.concat(encodeFrameParts({ type: 'x', data: lend(data) }));
    const memory = Buffer.alloc(data.length);
    let frame: InboundFrame | undefined;
    const decoder = new FrameDecoder({
      placer: (_h, _f, f) => {
        frame = f;
        return memory;
      },
    });
    const half = stream.length - 100_000;
    assert.deepStrictEqual(decoder.push(stream.subarray(0, half)), []);
    assert.ok(frame!.writesToPlace);
    frame!.detach();
    memory.fill(0x55);
    const [out] = decoder.push(stream.subarray(half));
    assert.ok((out!.data as Buffer).equals(data), 'the message has all of its bytes');
    assert.ok(memory.every((b) => b === 0x55), 'nothing was written to the destination after detach');
    assert.notEqual((out!.data as Buffer).buffer, memory.buffer);
  });

  it('refuses malformed attachment frames with a clear error', () => {
    const header = packr.pack(['data', { type: 'x' }]);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['payload shorter than the preamble', Buffer.from([0, 0, 0, 3, 0xc1, 0, 0]), /attachment frame of 3 bytes is shorter than its preamble/],
      ['header longer than the frame', attachmentFrame(header, Buffer.alloc(10), { headerLength: 1000 }), /attachment header of 1000 bytes does not fit a frame of \d+ bytes/],
      ['header over its limit', attachmentFrame(header, Buffer.alloc(10), { headerLength: MAX_ATTACHMENT_HEADER_BYTES + 1, payloadLength: 1 << 20 }), new RegExp(`header limit ${MAX_ATTACHMENT_HEADER_BYTES}`)],
      ['undecodable header', attachmentFrame(Buffer.from([0x92, 0x01]), Buffer.alloc(4)), /malformed frame: attachment header: /],
      ['header not [field, message]', attachmentFrame(packr.pack({ type: 'x' }), Buffer.alloc(4)), /header is not \[field, message\]/],
      ['field named type', attachmentFrame(packr.pack(['type', { type: 'x' }]), Buffer.alloc(4)), /attachment field "type" is not a plain field name/],
      ['field not a name', attachmentFrame(packr.pack(['a b', { type: 'x' }]), Buffer.alloc(4)), /attachment field "a b" is not a plain field name/],
      ['no message', attachmentFrame(packr.pack(['data', 42]), Buffer.alloc(4)), /no message object with a string type/],
      ['field already present', attachmentFrame(packr.pack(['data', { type: 'x', data: 1 }]), Buffer.alloc(4)), /already has a field "data"/],
    ];
    for (const [what, frame, reason] of cases) refused(frame, reason, what);
  });

  it('refuses an attachment frame over the size limit, at its prefix', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    const frame = Buffer.concat(encodeFrameParts({ type: 'x', data: lend(Buffer.alloc(2000)) }));
    assert.throws(() => decoder.push(frame.subarray(0, 4)), /frame of 2\d{3} bytes exceeds the limit of 1024/);
    assert.throws(() => encodeFrameParts({ type: 'x', data: lend(Buffer.alloc(2000)) }, 1024), /frame of \d+ bytes exceeds the limit of 1024/);
  });

  it('holds a truncated attachment frame without delivering it', () => {
    const data = randomBytes(5000);
    const frame = Buffer.concat(encodeFrameParts({ type: 'x', data: lend(data) }));
    const decoder = new FrameDecoder();
    assert.deepStrictEqual(decoder.push(frame.subarray(0, frame.length - 1)), [], 'nothing until the last byte');
    assert.deepStrictEqual(decoder.push(frame.subarray(frame.length - 1)), [{ type: 'x', data }]);
  });
});
