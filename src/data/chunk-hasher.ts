/**
 * SHA-256 of a blob as its chunks are written, on this thread or on a hashing thread. On the thread
 * that also reads the socket, hashing adds to every chunk's cost; on its own thread it runs beside the
 * reading, on a core the transfer leaves idle (the holder's side of a loopback copy, say). Bytes in a
 * SharedArrayBuffer (where a memory sink keeps the blob) go to the thread without a copy; any other
 * bytes are copied (rare: chunks that could not be placed). The caller must not change bytes it has
 * handed to `update`.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

export interface ChunkHasher {
  /** Adds the next bytes, in blob order. */
  update(bytes: Buffer): void;
  /** The hex SHA-256 of everything added; the hasher is used up. */
  digest(): Promise<string>;
  /** Drops the hasher (no digest wanted). */
  abandon(): void;
}

/** A hasher on the calling thread. */
export function inlineHasher(): ChunkHasher {
  const hash = createHash('sha256');
  return {
    update: (bytes) => void hash.update(bytes),
    digest: () => Promise.resolve(hash.digest('hex')),
    abandon: () => undefined,
  };
}

/** Shared bytes gathered before they go to the thread (see `hasher`). */
const BATCH_BYTES = 4 * 1024 * 1024;

type Request =
  | { id: number; op: 'update'; buffer: ArrayBufferLike; offset: number; length: number }
  | { id: number; op: 'digest' | 'drop' };

type Reply = { id: number; hex: string } | { id: number; error: string };

/**
 * The hashing thread: self-contained (no imports of ours, and dynamic imports only, which an eval'd
 * script has whether it runs as CommonJS or as a module), so it runs alike from sources and from dist.
 * Messages posted before the imports resolve wait in the port.
 */
const WORKER_SOURCE = `
Promise.all([import('node:worker_threads'), import('node:crypto')]).then(([{ parentPort }, { createHash }]) => {
  const hashes = new Map();
  parentPort.on('message', (m) => {
    try {
      if (m.op === 'update') {
        let h = hashes.get(m.id);
        if (!h) hashes.set(m.id, (h = createHash('sha256')));
        h.update(new Uint8Array(m.buffer, m.offset, m.length));
      } else if (m.op === 'digest') {
        const h = hashes.get(m.id) || createHash('sha256');
        hashes.delete(m.id);
        parentPort.postMessage({ id: m.id, hex: h.digest('hex') });
      } else hashes.delete(m.id);
    } catch (err) {
      hashes.delete(m.id);
      parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
    }
  });
});
`;

/**
 * One hashing thread shared by every hasher it makes; started on first use, and not keeping the
 * process alive while no digest is awaited. If the thread dies, awaited digests reject and the next
 * hasher starts a new thread.
 */
export class HashThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (hex: string) => void; reject: (err: Error) => void }>();

  /** A hasher on the thread (started now if need be: throws if it cannot be). */
  hasher(): ChunkHasher {
    const id = ++this.nextId;
    let used = false;
    // A hasher lives on one thread: if that thread died, its earlier bytes are gone, and the digest fails.
    let worker: Worker | undefined = this.thread();
    const post = (m: Request, transfer?: ArrayBuffer[]) => {
      const current = this.thread();
      worker ??= current;
      if (worker === current) current.postMessage(m, transfer);
    };
    // Adjacent shared bytes (a blob's chunks, written in order into one SharedArrayBuffer) go to the
    // thread as one range of up to BATCH_BYTES: one message and one wake-up of the thread per batch.
    let batch: { buffer: SharedArrayBuffer; offset: number; length: number } | undefined;
    const flush = () => {
      if (batch) post({ id, op: 'update', ...batch });
      batch = undefined;
    };
    return {
      update: (bytes) => {
        if (used) throw new Error('hasher already used up');
        if (bytes.buffer instanceof SharedArrayBuffer) {
          if (batch?.buffer === bytes.buffer && batch.offset + batch.length === bytes.byteOffset) batch.length += bytes.byteLength;
          else {
            flush();
            batch = { buffer: bytes.buffer, offset: bytes.byteOffset, length: bytes.byteLength };
          }
          if (batch.length >= BATCH_BYTES) flush();
        } else {
          flush();
          const copy = new Uint8Array(bytes);
          post({ id, op: 'update', buffer: copy.buffer, offset: 0, length: copy.byteLength }, [copy.buffer]);
        }
      },
      digest: () => {
        if (used) return Promise.reject(new Error('hasher already used up'));
        used = true;
        flush();
        return new Promise<string>((resolve, reject) => {
          if (worker !== undefined && worker !== this.worker) return reject(new Error('the hashing thread died during the transfer'));
          this.waiting.set(id, { resolve, reject });
          post({ id, op: 'digest' });
          this.worker?.ref();
        });
      },
      abandon: () => {
        if (used) return;
        used = true;
        batch = undefined;
        if (worker !== undefined && worker === this.worker) post({ id, op: 'drop' });
      },
    };
  }

  /** Stops the thread (awaited digests reject). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll('the hashing thread was stopped');
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // No inherited flags (a TypeScript loader, --input-type): the thread needs none of them.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    worker.on('message', (reply: Reply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('hex' in reply) w.resolve(reply.hex);
      else w.reject(new Error(`hashing failed: ${reply.error}`));
    });
    const died = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(why);
    };
    worker.on('error', (err) => died(`the hashing thread failed: ${err.message}`));
    worker.on('exit', (code) => died(`the hashing thread exited (${code})`));
    // After the listeners (adding a 'message' listener refs the thread again).
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(why: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(new Error(why));
  }
}
