/**
 * Length-prefixed framing for stream transports: every frame is a 4-byte big-endian payload
 * length followed by the message encoded with msgpackr.
 *
 * Encoding: msgpackr with records (plain objects are written as self-describing record
 * definitions inside each frame, so frames decode independently of one another) and
 * `mapsAsObjects: false`, which is what lets a `Map` come back as a `Map` and a plain object as a
 * plain object; with `useRecords: false` the two are indistinguishable on the wire. Buffers,
 * typed arrays, bigint (any size), Date, Set, RegExp and Error round-trip; `-0` becomes `0`;
 * functions and symbols cannot be encoded. Binary values in a decoded message are views into the
 * received bytes (no copy): pushed chunks must not be modified afterwards.
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import type { Message } from './types.js';

/** The default largest payload (in bytes) a frame may carry: 64 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** Bytes of the length prefix in front of every payload. */
export const FRAME_HEADER_BYTES = 4;

/** A frame that cannot be encoded or decoded; on a connection this is a protocol violation. */
export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrameError';
  }
}

const packr = new Packr({ mapsAsObjects: false, moreTypes: true, useBigIntExtension: true });

function checkLimit(maxFrameBytes: number): number {
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 1 || maxFrameBytes > 0xffff_ffff) {
    throw new RangeError(`maxFrameBytes must be an integer from 1 to ${0xffff_ffff}, got ${maxFrameBytes}`);
  }
  return maxFrameBytes;
}

function tooLarge(bytes: number, limit: number): FrameError {
  return new FrameError(`frame of ${bytes} bytes exceeds the limit of ${limit}`);
}

/**
 * Encodes one message as a frame (length prefix included). Throws FrameError when the message
 * cannot be encoded or its payload is larger than `maxFrameBytes`.
 */
export function encodeFrame(message: Message, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  let frame: Buffer;
  try {
    // RESERVE_START_SPACE | 4: msgpackr leaves 4 bytes in front of the payload for the prefix.
    frame = packr.pack(message, RESERVE_START_SPACE | FRAME_HEADER_BYTES);
  } catch (err) {
    throw new FrameError(`cannot encode message of type ${JSON.stringify(message?.type)}: ${(err as Error).message}`);
  }
  const payload = frame.length - FRAME_HEADER_BYTES;
  if (payload > maxFrameBytes) throw tooLarge(payload, maxFrameBytes);
  frame.writeUInt32BE(payload, 0);
  return frame;
}

/** Decodes one payload (without its prefix) and checks that it is a message. */
export function decodePayload(payload: Buffer): Message {
  let value: unknown;
  try {
    value = packr.unpack(payload);
  } catch (err) {
    throw new FrameError(`malformed frame: ${(err as Error).message}`);
  }
  if (!isMessage(value)) throw new FrameError('frame is not a message object with a string type');
  return value;
}

function isMessage(value: unknown): value is Message {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && typeof (value as { type?: unknown }).type === 'string';
}

export interface FrameDecoderOptions {
  /** Largest payload accepted; a larger length prefix fails before its body is buffered. */
  maxFrameBytes?: number;
}

/**
 * Turns a byte stream into messages: frames may be split across chunks and a chunk may hold
 * several frames. After a FrameError the stream is unusable (framing is lost) and every later
 * `push` throws the same error; messages decoded from the failing chunk before the bad frame
 * are not returned.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Payload length of the frame being assembled, or -1 while its prefix is incomplete. */
  private expected = -1;
  private failure: FrameError | undefined;
  private limit: number;

  constructor(options: FrameDecoderOptions = {}) {
    this.limit = checkLimit(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  }

  /** The current payload limit; it can be changed between pushes (e.g. raised after authentication). */
  get maxFrameBytes(): number {
    return this.limit;
  }

  set maxFrameBytes(limit: number) {
    this.limit = checkLimit(limit);
  }

  /** Bytes received but not yet returned as messages. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  push(chunk: Buffer): Message[] {
    if (this.failure) throw this.failure;
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const messages: Message[] = [];
    try {
      for (;;) {
        if (this.expected < 0) {
          if (this.buffered < FRAME_HEADER_BYTES) break;
          const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
          if (length > this.limit) throw tooLarge(length, this.limit);
          this.expected = length;
        }
        if (this.buffered < this.expected) break;
        const payload = this.take(this.expected);
        this.expected = -1;
        messages.push(decodePayload(payload));
      }
    } catch (err) {
      this.failure = err instanceof FrameError ? err : new FrameError(`malformed frame: ${(err as Error).message}`);
      this.chunks = [];
      this.buffered = 0;
      throw this.failure;
    }
    return messages;
  }

  /** Removes and returns the next `n` buffered bytes (a view when they lie in one chunk). */
  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0]!;
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    return out;
  }
}
