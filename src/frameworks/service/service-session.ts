/**
 * A client's connection to the service (one per `Distribution.connect`): the blobs it sent (the
 * capture cache's other side: a later batch names them by hash), kept within a byte budget, least
 * recently used first — a batch naming one no longer kept is answered 409 with the missing hashes, and
 * the client sends them again — and its batches. A session unused for `idleMs` is closed.
 */
import type { ServiceBatch } from './service-batch.js';
import type { Tenant } from './service-tenants.js';

export class ServiceSession {
  readonly batches = new Map<string, ServiceBatch>();
  lastUsed = Date.now();
  private readonly blobs = new Map<string, Uint8Array>();
  private blobBytes = 0;
  private seq = 0;

  constructor(readonly id: string, readonly tenant: Tenant, private readonly budgetBytes: number) {}

  nextBatchId(): string {
    return `${this.id}.${++this.seq}`;
  }

  hasBlob(hash: string): boolean {
    return this.blobs.has(hash);
  }

  /** A blob's bytes, marked as just used. */
  blob(hash: string): Uint8Array | undefined {
    const b = this.blobs.get(hash);
    if (b) {
      this.blobs.delete(hash);
      this.blobs.set(hash, b);
    }
    return b;
  }

  /** Keeps a blob; the least recently used go beyond the budget, but never those in `keep`. */
  putBlob(hash: string, bytes: Uint8Array, keep: ReadonlySet<string> = new Set()): void {
    if (!this.blobs.has(hash)) this.blobBytes += bytes.length;
    this.blobs.delete(hash);
    this.blobs.set(hash, bytes);
    for (const [h, b] of this.blobs) {
      if (this.blobBytes <= this.budgetBytes) break;
      if (keep.has(h) || h === hash) continue;
      this.blobs.delete(h);
      this.blobBytes -= b.length;
    }
  }

  /** Cancels what still runs. */
  async close(): Promise<void> {
    for (const b of this.batches.values()) await b.cancel('all');
    this.blobs.clear();
    this.blobBytes = 0;
  }
}
