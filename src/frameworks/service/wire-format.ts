/**
 * How a client and a service talk on the wire (seed 002 §3.4: "an own binary format to reduce
 * client-to-service traffic"): request bodies are MessagePack (msgpackr; blobs as raw bytes, not
 * base64), compressed with brotli or gzip as the service announces and the `Content-Encoding` header
 * says — unless a sample shows the body does not compress (random floats), when it goes as it is. A
 * batch's outcomes stream back as frames: a 4-byte big-endian length, then a MessagePack value.
 */
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { Packr } from 'msgpackr';

export const MSGPACK = 'application/x-msgpack';
export const FRAMES = 'application/x-tidepool-frames';

export type ContentEncoding = 'br' | 'gzip' | 'identity';
/** What a service decodes, best first. */
export const ENCODINGS: readonly ContentEncoding[] = ['br', 'gzip'];

// Plain objects stay objects, binary stays Buffer; no records: every value decodes on its own.
const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export function pack(value: unknown): Buffer {
  return packr.pack(value);
}

export function unpack<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}

/** Bodies smaller than this are not worth compressing. */
const MIN_COMPRESS_BYTES = 1024;
const SAMPLE_BYTES = 32 * 1024;

/** The encoding for a body: `preferred` unless the body is small or a sample of it does not compress. */
export function chooseEncoding(body: Uint8Array, preferred: ContentEncoding): ContentEncoding {
  if (preferred === 'identity' || body.length < MIN_COMPRESS_BYTES) return 'identity';
  if (body.length <= 3 * SAMPLE_BYTES) return preferred;
  let raw = 0;
  let packed = 0;
  for (const at of [0, (body.length >> 1) - SAMPLE_BYTES / 2, body.length - SAMPLE_BYTES]) {
    const slice = body.subarray(at, at + SAMPLE_BYTES);
    raw += slice.length;
    packed += compress(slice, 'br').length;
  }
  return packed < raw * 0.9 ? preferred : 'identity';
}

export function compress(body: Uint8Array, encoding: ContentEncoding): Buffer {
  switch (encoding) {
    // Quality 1: fast (a few hundred MB/s); higher qualities gain little on numbers and cost much more.
    case 'br': return brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    case 'gzip': return gzipSync(body, { level: 1 });
    default: return Buffer.from(body.buffer, body.byteOffset, body.length);
  }
}

/** A body that decompresses beyond the limit (or does not decompress). */
export class BodyError extends Error {
  constructor(message: string, readonly status: 400 | 413 | 415) {
    super(message);
    this.name = 'BodyError';
  }
}

/** Decompresses a request body as its `Content-Encoding` header says, refusing more than `maxBytes` once decompressed. */
export function decompress(body: Buffer, header: string | undefined, maxBytes: number): Buffer {
  const encoding = (header ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return body;
  if (encoding !== 'br' && encoding !== 'gzip') throw new BodyError(`Content-Encoding ${encoding} is not supported (use ${ENCODINGS.join(', ')} or identity)`, 415);
  try {
    return encoding === 'br' ? brotliDecompressSync(body, { maxOutputLength: maxBytes }) : gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw new BodyError(`the body decompresses to more than ${maxBytes} bytes`, 413);
    throw new BodyError(`the body does not decompress as ${encoding}: ${(e as Error).message}`, 400);
  }
}

/** One frame of a stream: length, then the value. */
export function frame(value: unknown): Buffer {
  const payload = pack(value);
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

/** Cuts a byte stream into frames as its pieces arrive. */
export class FrameReader<T> {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxFrameBytes = 256 * 1024 * 1024) {}

  /** The frames completed by this piece. */
  push(piece: Buffer): T[] {
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    const out: T[] = [];
    for (;;) {
      if (this.pendingBytes < 4) return out;
      let head = this.pending[0]!;
      if (head.length < 4) head = this.flatten();
      const length = head.readUInt32BE(0);
      if (length > this.maxFrameBytes) throw new Error(`a frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes}`);
      if (this.pendingBytes < 4 + length) return out;
      const all = this.flatten();
      out.push(unpack<T>(all.subarray(4, 4 + length)));
      const rest = all.subarray(4 + length);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
    }
  }

  private flatten(): Buffer {
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [all];
    return all;
  }
}
