/**
 * Binary attachments: one large Buffer field of a message carried beside its msgpack header instead
 * of inside it, so that neither end copies the bytes in user space:
 *
 *   u32 payload length | 0xc1 | u32 header length | header: msgpack [field, message without field] | attachment bytes
 *
 * 0xc1 is the one byte msgpack never uses, so a payload starting with it cannot be an ordinary frame.
 * The sender writes the prefix+header and the (lent) bytes as two buffers of one corked write (no
 * copy into the frame); the receiver may give the attachment a destination before its bytes arrive
 * (a placer), and the decoder copies them there straight from the socket's chunks. The decoded
 * message is the same as with an ordinary frame: the field holds a Buffer of the bytes.
 */
import type { InboundFrame, Message } from './types.js';

/** First payload byte of a frame with an attachment (msgpack's "never used" byte). */
export const ATTACHMENT_MARKER = 0xc1;
/** Marker and header length, in front of the header. */
export const ATTACHMENT_PREAMBLE_BYTES = 5;
/** Largest header an attachment frame may carry (the message without its bytes is small). */
export const MAX_ATTACHMENT_HEADER_BYTES = 64 * 1024;

const FIELD = /^[A-Za-z_$][\w$]{0,63}$/;
const lent = new WeakSet<Buffer>();
const EMPTY = Buffer.alloc(0);

/**
 * Marks `bytes` as lent to the transport: a message field holding it is sent as an attachment, written
 * to the socket without a copy. The caller must never modify these bytes afterwards (immutable blob
 * content, say). Returns `bytes`.
 */
export function lend(bytes: Buffer): Buffer {
  lent.add(bytes);
  return bytes;
}

/** The field of `message` that holds lent bytes (the first such), if any. */
export function lentField(message: Message): string | undefined {
  for (const key in message) {
    const value = message[key];
    if (Buffer.isBuffer(value) && lent.has(value) && FIELD.test(key) && key !== 'type') return key;
  }
  return undefined;
}

/** Checks a decoded header: [field, message without field]; returns why it is malformed, or the parts. */
export function parseAttachmentHeader(value: unknown, isMessage: (v: unknown) => v is Message): { field: string; message: Message } | string {
  if (!Array.isArray(value) || value.length !== 2) return 'header is not [field, message]';
  const [field, message] = value as [unknown, unknown];
  if (typeof field !== 'string' || !FIELD.test(field) || field === 'type') return `attachment field ${JSON.stringify(field)} is not a plain field name`;
  if (!isMessage(message)) return 'header holds no message object with a string type';
  if (Object.prototype.hasOwnProperty.call(message, field)) return `the message already has a field ${JSON.stringify(field)}`;
  return { field, message };
}

/**
 * An attachment on its way in: the decoder copies arriving bytes into `target` (the placer's
 * destination, or private memory) until `complete`.
 */
export class InboundAttachment implements InboundFrame {
  private filledBytes = 0;
  private bytes: Buffer = EMPTY;
  private placed = false;

  constructor(readonly length: number) {}

  /** Sets the destination before any byte arrives: `target` when it has the right length, else private memory. */
  place(target: Buffer | undefined): void {
    this.placed = target !== undefined && target.length === this.length;
    this.bytes = this.placed ? target! : Buffer.allocUnsafe(this.length);
  }

  /** Where the bytes go (and, once complete, the message's field). */
  get target(): Buffer {
    return this.bytes;
  }

  get complete(): boolean {
    return this.filledBytes === this.length;
  }

  /** Still writing into the placer's destination. */
  get writesToPlace(): boolean {
    return this.placed && !this.complete;
  }

  /** Copies as much of `chunk` as the attachment still needs; returns the bytes taken. */
  fill(chunk: Buffer): number {
    const n = Math.min(chunk.length, this.length - this.filledBytes);
    chunk.copy(this.bytes, this.filledBytes, 0, n);
    this.filledBytes += n;
    return n;
  }

  /**
   * The placer's destination is no longer this frame's to write (another copy of those bytes went
   * there): what has arrived moves to private memory, and the rest follows it there. Idempotent.
   */
  detach(): void {
    if (!this.writesToPlace) return;
    const own = Buffer.allocUnsafe(this.length);
    this.bytes.copy(own, 0, 0, this.filledBytes);
    this.bytes = own;
    this.placed = false;
  }
}

/** The decoder's placer: an AttachmentPlacer (types.ts) with the peer already known. */
export type FramePlacer = (header: Message, field: string, frame: InboundFrame) => Buffer | undefined;
