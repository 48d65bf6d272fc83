/**
 * Where the bytes of a blob go while they arrive: memory (a SharedArrayBuffer of its size, written
 * in place) or, for a blob larger than the store's memory budget, a partial file renamed into place
 * when complete. The store reserved room for it before the sink was made; the writer has verified the
 * bytes against the hash before `finish`.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import type { BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';

/** A blob as a store holds it: what a completed sink hands back. */
export interface BlobInfo {
  hash: BlobHash;
  size: number;
  where: 'memory' | 'disk';
}

/** What a sink hands back to the store. */
export interface SinkOwner {
  adoptMemory(bytes: Buffer): BlobInfo;
  adoptFile(file: string): Promise<BlobInfo>;
  /** Gives back the reserved room (an aborted transfer). */
  release(): void;
}

export interface BlobSink {
  readonly hash: BlobHash;
  readonly size: number;
  /** The bytes are kept in shared memory (see `region`), not in a file. */
  readonly inMemory: boolean;
  /** Writes `data` at `offset` (in order: each write starts where the previous one ended, or at 0 after reset). */
  write(offset: number, data: Uint8Array): Promise<void>;
  /**
   * Where the bytes at `offset` will be kept, when they can be put there before `write` (memory):
   * a `write` of exactly this view then copies nothing. Undefined for a sink that cannot (a file).
   */
  region(offset: number, length: number): Buffer | undefined;
  /** Starts over (a transfer that must begin again). */
  reset(): void;
  /** Hands the complete, verified blob to the store. */
  finish(): Promise<BlobInfo>;
  /** Drops what was written and gives back the reserved room. */
  abort(): Promise<void>;
}

abstract class SequentialSink implements BlobSink {
  abstract readonly inMemory: boolean;
  protected written = 0;

  constructor(readonly hash: BlobHash, readonly size: number, protected readonly name: string, protected readonly owner: SinkOwner) {}

  async write(offset: number, data: Uint8Array): Promise<void> {
    if (offset !== this.written || offset + data.byteLength > this.size) {
      throw new DataError('BAD_INPUT', `${this.name}: write of ${data.byteLength} bytes at ${offset} does not follow the ${this.written} bytes written (of ${this.size})`, this.hash);
    }
    this.written += data.byteLength;
    await this.store(offset, data);
  }

  reset(): void {
    this.written = 0;
  }

  region(_offset: number, _length: number): Buffer | undefined {
    return undefined;
  }

  async finish(): Promise<BlobInfo> {
    if (this.written !== this.size) throw new DataError('CORRUPT', `${this.name}: ${this.written} of ${this.size} bytes written`, this.hash);
    return this.complete();
  }

  protected abstract store(offset: number, data: Uint8Array): Promise<void>;
  protected abstract complete(): Promise<BlobInfo>;
  abstract abort(): Promise<void>;
}

export class MemorySink extends SequentialSink {
  readonly inMemory = true;
  private readonly target: Buffer;

  constructor(hash: BlobHash, size: number, name: string, owner: SinkOwner) {
    super(hash, size, name, owner);
    this.target = Buffer.from(new SharedArrayBuffer(size));
  }

  override region(offset: number, length: number): Buffer | undefined {
    return offset >= 0 && offset + length <= this.size ? this.target.subarray(offset, offset + length) : undefined;
  }

  protected async store(offset: number, data: Uint8Array): Promise<void> {
    // Bytes that arrived in place (see `region`) are where they belong already.
    if (data.buffer === this.target.buffer && data.byteOffset === this.target.byteOffset + offset) return;
    this.target.set(data, offset);
  }

  protected async complete(): Promise<BlobInfo> {
    return this.owner.adoptMemory(this.target);
  }

  async abort(): Promise<void> {
    this.owner.release();
  }
}

export class FileSink extends SequentialSink {
  readonly inMemory = false;
  private handle: Promise<FileHandle> | undefined;

  constructor(hash: BlobHash, size: number, name: string, private readonly file: string, owner: SinkOwner) {
    super(hash, size, name, owner);
  }

  protected async store(offset: number, data: Uint8Array): Promise<void> {
    this.handle ??= open(this.file, 'w');
    const fh = await this.handle;
    for (let done = 0; done < data.byteLength;) done += (await fh.write(data, done, data.byteLength - done, offset + done)).bytesWritten;
  }

  protected async complete(): Promise<BlobInfo> {
    const fh = await (this.handle ?? open(this.file, 'w'));
    this.handle = undefined;
    await fh.close();
    return this.owner.adoptFile(this.file);
  }

  async abort(): Promise<void> {
    const fh = await this.handle?.catch(() => undefined);
    this.handle = undefined;
    await fh?.close().catch(() => undefined);
    await rm(this.file, { force: true });
    this.owner.release();
  }
}
