/**
 * Intermediate files between members as layer messages: a file travels in chunks of at most
 * CHUNK_BYTES (a frame stays far below the transport's limit, and a large file holds control
 * messages on the same connection back for one chunk at most), each saying where it goes in the
 * file and how long the file is. The receiver assembles them and has the file once every byte
 * arrived; a chunk that does not fit the file is refused, naming what is wrong.
 */
export const CHUNK_BYTES = 4 * 1024 * 1024;

export interface Chunk {
  offset: number;
  total: number;
  bytes: Uint8Array;
}

/** The chunks of `bytes` (one, possibly empty, for a file of at most CHUNK_BYTES). */
export function chunksOf(bytes: Uint8Array): Chunk[] {
  const out: Chunk[] = [];
  let offset = 0;
  do {
    const part = bytes.subarray(offset, offset + CHUNK_BYTES);
    out.push({ offset, total: bytes.length, bytes: Buffer.from(part.buffer, part.byteOffset, part.byteLength) });
    offset += CHUNK_BYTES;
  } while (offset < bytes.length);
  return out;
}

/** Undefined when `m` carries a well-formed chunk, else what is wrong. */
export function checkChunk(m: { offset?: unknown; total?: unknown; bytes?: unknown }): string | undefined {
  if (!Number.isSafeInteger(m.offset) || (m.offset as number) < 0) return 'needs a whole-number offset';
  if (!Number.isSafeInteger(m.total) || (m.total as number) < 0) return 'needs a whole-number total';
  if (!(m.bytes instanceof Uint8Array)) return 'needs bytes';
  if ((m.offset as number) + m.bytes.length > (m.total as number)) return `chunk at ${m.offset as number} of ${m.bytes.length} bytes ends past the file's ${m.total as number}`;
  return undefined;
}

/** One file being received. */
export class FileAssembly {
  private buffer: Uint8Array | undefined;
  private total = -1;
  private received = 0;

  /** Adds a chunk; returns the file when its last byte arrived. Throws if the chunk disagrees with earlier ones. */
  add(chunk: Chunk): Uint8Array | undefined {
    const wrong = checkChunk(chunk);
    if (wrong) throw new Error(`file chunk: ${wrong}`);
    if (this.total < 0) {
      // The usual case, one chunk: the received bytes are the file (no copy).
      if (chunk.offset === 0 && chunk.bytes.length === chunk.total) return chunk.bytes;
      this.total = chunk.total;
      this.buffer = new Uint8Array(chunk.total);
    } else if (chunk.total !== this.total) throw new Error(`file chunk says the file has ${chunk.total} bytes, an earlier one ${this.total}`);
    this.buffer!.set(chunk.bytes, chunk.offset);
    this.received += chunk.bytes.length;
    return this.received === this.total ? this.buffer : undefined;
  }
}
