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
 *
 * A message with lent bytes (attachment.ts) is framed with them as an attachment beside its header:
 * `encodeFrameParts` returns the parts to write, and the decoder copies the attachment straight into
 * the destination a placer chose for it.
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import {
  ATTACHMENT_MARKER, ATTACHMENT_PREAMBLE_BYTES, InboundAttachment, lentField, MAX_ATTACHMENT_HEADER_BYTES, parseAttachmentHeader,
  type FramePlacer,
} from './attachment.js';
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

/**
 * Encodes one message as the buffers to write, in order: one frame, or for a message with lent bytes
 * (see `lend`) the prefix and header followed by those bytes themselves (not copied). Throws like
 * `encodeFrame`.
 */
export function encodeFrameParts(message: Message, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer[] {
  const field = lentField(message);
  if (field === undefined) return [encodeFrame(message, maxFrameBytes)];
  const { [field]: bytes, ...rest } = message;
  const attachment = bytes as Buffer;
  let header: Buffer;
  try {
    header = packr.pack([field, rest]);
  } catch (err) {
    throw new FrameError(`cannot encode message of type ${JSON.stringify(message.type)}: ${(err as Error).message}`);
  }
  if (header.length > MAX_ATTACHMENT_HEADER_BYTES) {
    throw new FrameError(`header of ${header.length} bytes for message ${JSON.stringify(message.type)} exceeds the attachment header limit of ${MAX_ATTACHMENT_HEADER_BYTES}`);
  }
  const payload = ATTACHMENT_PREAMBLE_BYTES + header.length + attachment.length;
  if (payload > maxFrameBytes) throw tooLarge(payload, maxFrameBytes);
  const head = Buffer.allocUnsafe(FRAME_HEADER_BYTES + ATTACHMENT_PREAMBLE_BYTES + header.length);
  head.writeUInt32BE(payload, 0);
  head[FRAME_HEADER_BYTES] = ATTACHMENT_MARKER;
  head.writeUInt32BE(header.length, FRAME_HEADER_BYTES + 1);
  header.copy(head, FRAME_HEADER_BYTES + ATTACHMENT_PREAMBLE_BYTES);
  return [head, attachment];
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
  /** Chooses destinations for attachments (default: private memory). */
  placer?: FramePlacer;
}

/** What the decoder waits for: a length prefix, a payload, an attachment's header, or its bytes. */
type DecoderState =
  | { kind: 'prefix' }
  | { kind: 'payload'; length: number }
  | { kind: 'header'; length: number; headerLength: number }
  | { kind: 'attachment'; message: Message; field: string; frame: InboundAttachment };

/**
 * Turns a byte stream into messages: frames may be split across chunks and a chunk may hold
 * several frames. After a FrameError the stream is unusable (framing is lost) and every later
 * `push` throws the same error; messages decoded from the failing chunk before the bad frame
 * are not returned.
 */
export class FrameDecoder {
  /** Where attachments go; may be set between pushes (e.g. once the peer is authenticated). */
  placer: FramePlacer | undefined;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private state: DecoderState = { kind: 'prefix' };
  private failure: FrameError | undefined;
  private limit: number;

  constructor(options: FrameDecoderOptions = {}) {
    this.limit = checkLimit(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
    this.placer = options.placer;
  }

  /** The current payload limit; it can be changed between pushes (e.g. raised after authentication). */
  get maxFrameBytes(): number {
    return this.limit;
  }

  set maxFrameBytes(limit: number) {
    this.limit = checkLimit(limit);
  }

  /** Bytes received but not yet returned as messages (an attachment's bytes count once placed). */
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
      for (let message = this.step(); message !== false; message = this.step()) if (message) messages.push(message);
    } catch (err) {
      this.failure = err instanceof FrameError ? err : new FrameError(`malformed frame: ${(err as Error).message}`);
      this.chunks = [];
      this.buffered = 0;
      throw this.failure;
    }
    return messages;
  }

  /** One step of decoding: a message, undefined (progress, no message yet) or false (needs more bytes). */
  private step(): Message | undefined | false {
    const s = this.state;
    switch (s.kind) {
      case 'prefix': {
        if (this.buffered < FRAME_HEADER_BYTES) return false;
        const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
        if (length > this.limit) throw tooLarge(length, this.limit);
        this.state = { kind: 'payload', length };
        return undefined;
      }
      case 'payload': {
        if (this.buffered > 0 && this.chunks[0]![0] === ATTACHMENT_MARKER) {
          if (s.length < ATTACHMENT_PREAMBLE_BYTES) throw new FrameError(`malformed frame: attachment frame of ${s.length} bytes is shorter than its preamble`);
          if (this.buffered < ATTACHMENT_PREAMBLE_BYTES) return false;
          const headerLength = this.take(ATTACHMENT_PREAMBLE_BYTES).readUInt32BE(1);
          if (headerLength > MAX_ATTACHMENT_HEADER_BYTES || headerLength > s.length - ATTACHMENT_PREAMBLE_BYTES) {
            throw new FrameError(`malformed frame: attachment header of ${headerLength} bytes does not fit a frame of ${s.length} bytes (header limit ${MAX_ATTACHMENT_HEADER_BYTES})`);
          }
          this.state = { kind: 'header', length: s.length, headerLength };
          return undefined;
        }
        if (this.buffered < s.length) return false;
        this.state = { kind: 'prefix' };
        return decodePayload(this.take(s.length));
      }
      case 'header': {
        if (this.buffered < s.headerLength) return false;
        const header = this.decodeHeader(this.take(s.headerLength));
        const frame = new InboundAttachment(s.length - ATTACHMENT_PREAMBLE_BYTES - s.headerLength);
        frame.place(this.placer?.(header.message, header.field, frame));
        this.state = { kind: 'attachment', ...header, frame };
        return undefined;
      }
      case 'attachment': {
        while (!s.frame.complete && this.chunks.length > 0) {
          const first = this.chunks[0]!;
          const n = s.frame.fill(first);
          this.buffered -= n;
          if (n === first.length) this.chunks.shift();
          else this.chunks[0] = first.subarray(n);
        }
        if (!s.frame.complete) return false;
        this.state = { kind: 'prefix' };
        s.message[s.field] = s.frame.target;
        return s.message;
      }
    }
  }

  private decodeHeader(bytes: Buffer): { message: Message; field: string } {
    let value: unknown;
    try {
      value = packr.unpack(bytes);
    } catch (err) {
      throw new FrameError(`malformed frame: attachment header: ${(err as Error).message}`);
    }
    const parsed = parseAttachmentHeader(value, isMessage);
    if (typeof parsed === 'string') throw new FrameError(`malformed frame: attachment header: ${parsed}`);
    return parsed;
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
