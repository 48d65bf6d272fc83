/**
 * The blob transfer protocol, carried as ordinary messages over the node's Transport.
 *
 *   receiver -> holder   blob.fetch  { xfer, hash, size, job, from, chunkBytes, window, replyTo }
 *   holder -> receiver   blob.chunk  { xfer, seq, size, data }      chunks seq = from, from+1, …
 *   receiver -> holder   blob.credit { xfer, upTo }                 the holder may send seq < upTo
 *   receiver -> holder   blob.cancel { xfer }
 *   holder -> receiver   blob.refuse { xfer, code, reason }
 *
 * A transfer (`xfer`, chosen by the receiver, new for every attempt) streams chunks of `chunkBytes`
 * (the last one shorter), never more than `window` chunks beyond what the receiver has consumed in
 * order: credit is flow control, so a 200 MB blob never floods the receiver. The receiver grants credit in
 * steps of half a window (blob-receiver.ts, `creditStep`), so the holder always has half a window to send
 * while a credit is on its way and a transfer costs one credit per half window, not one per chunk. Chunk data is lent to the
 * transport (attachment.ts): on TCP it is written beside the chunk's header, not copied into a frame,
 * and the receiver may have it copied from the socket straight to its place in the blob (see
 * `chunkHeader` and BlobReceiver.accepts).
 */
import type { Message } from '../transport/types.js';
import { isBlobHash } from './content-hash.js';

export const MIN_CHUNK_BYTES = 16 * 1024;
export const MAX_CHUNK_BYTES = 4 * 1024 * 1024;
export const MAX_WINDOW = 64;

/** A fetch as the receiver's state machine makes it; the I/O layer adds `replyTo`. */
export interface FetchRequest {
  type: 'blob.fetch';
  xfer: string;
  hash: string;
  size: number;
  /** The job the blob is fetched for (what `mayFetch` checks). */
  job: string;
  /** First chunk wanted (a transfer resumed from another holder starts mid-blob). */
  from: number;
  chunkBytes: number;
  window: number;
}

export interface FetchMessage extends Message, FetchRequest {
  type: 'blob.fetch';
  /** Where the holder sends chunks (the receiver's transport address). */
  replyTo: string;
}

export interface ChunkMessage extends Message {
  type: 'blob.chunk';
  xfer: string;
  seq: number;
  /** The blob's size as the holder knows it. */
  size: number;
  data: Buffer;
}

export interface CreditMessage extends Message {
  type: 'blob.credit';
  xfer: string;
  upTo: number;
}

export interface CancelMessage extends Message {
  type: 'blob.cancel';
  xfer: string;
}

export type RefuseCode = 'NOT_FOUND' | 'REFUSED' | 'BAD_REQUEST' | 'FAILED';

export interface RefuseMessage extends Message {
  type: 'blob.refuse';
  xfer: string;
  code: RefuseCode;
  reason: string;
}

export type BlobMessage = FetchMessage | ChunkMessage | CreditMessage | CancelMessage | RefuseMessage;

/** A chunk without its data: what is known when its header has arrived and its bytes have not. */
export type ChunkHeader = Pick<ChunkMessage, 'xfer' | 'seq' | 'size'>;

/**
 * The one routing rule for frames on a node's transport: an object whose `type` starts with "blob."
 * belongs to the data plane (which validates it further); anything else is the node's (a job envelope).
 */
export function isBlobMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string' && (m as Message).type.startsWith('blob.');
}

export function chunkCount(size: number, chunkBytes: number): number {
  return Math.ceil(size / chunkBytes);
}

/** Byte range of chunk `seq`. */
export function chunkRange(seq: number, size: number, chunkBytes: number): { offset: number; length: number } {
  const offset = seq * chunkBytes;
  return { offset, length: Math.min(chunkBytes, size - offset) };
}

const nat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const str = (v: unknown, max = 200): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const REFUSE_CODES = new Set<RefuseCode>(['NOT_FOUND', 'REFUSED', 'BAD_REQUEST', 'FAILED']);

/** The header of a chunk whose data is still to arrive as field `field`, or undefined when it is not a well-formed one. */
export function chunkHeader(m: Message, field: string): ChunkHeader | undefined {
  const r = m as Record<string, unknown>;
  return m.type === 'blob.chunk' && field === 'data' && str(r.xfer) && nat(r.seq) && nat(r.size) ? { xfer: r.xfer, seq: r.seq, size: r.size } : undefined;
}

/** Checks a message from a peer: the protocol message it is, or why it is malformed. */
export function parseBlobMessage(m: Message): BlobMessage | string {
  const r = m as Record<string, unknown>;
  if (!str(r.xfer)) return `${m.type}: xfer is not a short string`;
  switch (m.type) {
    case 'blob.fetch':
      if (!isBlobHash(r.hash)) return 'blob.fetch: hash is not a SHA-256 hex digest';
      if (!nat(r.size) || !nat(r.from) || !str(r.job) || !str(r.replyTo, 1000)) return 'blob.fetch: size, from, job or replyTo malformed';
      if (!nat(r.chunkBytes) || r.chunkBytes < MIN_CHUNK_BYTES || r.chunkBytes > MAX_CHUNK_BYTES) return `blob.fetch: chunkBytes must be ${MIN_CHUNK_BYTES}..${MAX_CHUNK_BYTES}`;
      if (!nat(r.window) || r.window < 1 || r.window > MAX_WINDOW) return `blob.fetch: window must be 1..${MAX_WINDOW}`;
      return m as FetchMessage;
    case 'blob.chunk':
      if (!nat(r.seq) || !nat(r.size) || !Buffer.isBuffer(r.data)) return 'blob.chunk: seq, size or data malformed';
      return m as ChunkMessage;
    case 'blob.credit':
      return nat(r.upTo) ? (m as CreditMessage) : 'blob.credit: upTo malformed';
    case 'blob.cancel':
      return m as CancelMessage;
    case 'blob.refuse':
      return REFUSE_CODES.has(r.code as RefuseCode) && typeof r.reason === 'string' ? (m as RefuseMessage) : 'blob.refuse: code or reason malformed';
    default:
      return `unknown blob message type ${JSON.stringify(m.type)}`;
  }
}
