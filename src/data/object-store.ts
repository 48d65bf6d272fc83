/**
 * A node's object store: immutable blobs addressed by the SHA-256 of their content, held in memory
 * up to a budget and spilled to a local directory beyond it.
 *
 * - Memory copies live in SharedArrayBuffers, so `get` hands out Buffer views and `getShared` the
 *   same bytes for worker threads: one copy per node, never one per consumer. Views are read-only by
 *   convention (a blob is immutable; writing into a view corrupts it for every holder of the view).
 * - Limits are checked before anything is written: a per-object maximum and a per-node budget
 *   (memory and disk together); the error names the object, its size and the limit.
 * - Integrity: bytes are hashed when they arrive (`put`, a transfer's sink) and whenever they are
 *   read back from disk; a blob corrupted on disk is discarded, reported (`corrupt` event) and refused.
 */
import { randomBytes } from 'node:crypto';
import { constants as bufferConstants } from 'node:buffer';
import { mkdir, mkdtemp, open, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Emitter } from '../util/emitter.js';
import { log } from '../util/log.js';
import { checkBlobHash, hashOf, shortHash, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';
import { FileSink, MemorySink, type BlobInfo, type BlobSink } from './blob-sink.js';

export interface ObjectStoreOptions {
  /** Directory for spilled blobs; created if missing. Default: a fresh directory under the OS temp dir, removed on close. */
  dir?: string;
  /** Bytes of blobs kept in memory before older ones spill to disk (default: 512 MiB or a quarter of RAM, the smaller). */
  memoryBytes?: number;
  /** Bytes of blobs this node stores in all, memory and disk (default 64 GiB). */
  budgetBytes?: number;
  /** Largest single blob (default 2 GiB). */
  maxObjectBytes?: number;
}

export interface ObjectStoreStats {
  objects: number;
  memoryBytes: number;
  diskBytes: number;
  /** Bytes promised to transfers in progress. */
  reservedBytes: number;
  spills: number;
  corruptions: number;
}

export interface ObjectStoreEvents extends Record<string, unknown> {
  /** A blob failed its integrity check and was discarded. */
  corrupt: { hash: BlobHash; where: 'disk' | 'arrival'; reason: string };
  /** A blob moved from memory to disk. */
  spilled: { hash: BlobHash; size: number };
}

interface Entry {
  hash: BlobHash;
  size: number;
  /** The bytes while in memory (a view over a SharedArrayBuffer). */
  memory: Buffer | undefined;
  /** True once a verified copy exists on disk. */
  onDisk: boolean;
  lastUse: number;
  spilling: boolean;
}

const GiB = 1024 ** 3;
export const DEFAULT_MAX_OBJECT_BYTES = Math.min(2 * GiB, bufferConstants.MAX_LENGTH);
export const DEFAULT_BUDGET_BYTES = 64 * GiB;
export const DEFAULT_MEMORY_BYTES = Math.min(512 * 1024 ** 2, Math.floor(os.totalmem() / 4));
const PART = '.part-';

/** Bytes of one blob in a SharedArrayBuffer, viewed as a Buffer. */
export function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}

export class ObjectStore {
  readonly events = new Emitter<ObjectStoreEvents>();
  readonly dir: string;
  readonly memoryLimit: number;
  readonly budget: number;
  readonly maxObjectBytes: number;
  private readonly entries = new Map<BlobHash, Entry>();
  private readonly ownsDir: boolean;
  private memoryUsed = 0;
  private diskUsed = 0;
  private reserved = 0;
  private spills = 0;
  private corruptions = 0;
  private clock = 0;
  private closed = false;

  private constructor(dir: string, ownsDir: boolean, opts: ObjectStoreOptions) {
    this.dir = dir;
    this.ownsDir = ownsDir;
    this.memoryLimit = positive(opts.memoryBytes ?? DEFAULT_MEMORY_BYTES, 'memoryBytes', true);
    this.budget = positive(opts.budgetBytes ?? DEFAULT_BUDGET_BYTES, 'budgetBytes');
    this.maxObjectBytes = positive(opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES, 'maxObjectBytes');
    if (this.maxObjectBytes > bufferConstants.MAX_LENGTH) throw new RangeError(`maxObjectBytes: at most ${bufferConstants.MAX_LENGTH} on this platform`);
  }

  /**
   * Opens a store. Blobs already in `dir` (files named by their hash) are indexed and verified when
   * first read; unfinished transfers (`*.part-*`) are removed.
   */
  static async open(opts: ObjectStoreOptions = {}): Promise<ObjectStore> {
    const dir = opts.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'tidepool-blobs-')));
    await mkdir(dir, { recursive: true });
    const store = new ObjectStore(dir, opts.dir === undefined, opts);
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if (name.includes(PART)) await rm(file, { force: true });
      else if (/^[0-9a-f]{64}$/.test(name)) {
        const size = (await stat(file)).size;
        store.entries.set(name, { hash: name, size, memory: undefined, onDisk: true, lastUse: 0, spilling: false });
        store.diskUsed += size;
      }
    }
    return store;
  }

  get stats(): ObjectStoreStats {
    return {
      objects: this.entries.size, memoryBytes: this.memoryUsed, diskBytes: this.diskUsed, reservedBytes: this.reserved,
      spills: this.spills, corruptions: this.corruptions,
    };
  }

  has(hash: BlobHash): boolean {
    return this.entries.has(hash);
  }

  info(hash: BlobHash): BlobInfo | undefined {
    const e = this.entries.get(hash);
    return e && { hash, size: e.size, where: e.memory ? 'memory' : 'disk' };
  }

  list(): BlobInfo[] {
    return [...this.entries.keys()].map((h) => this.info(h)!);
  }

  /**
   * Stores a copy of `bytes` (the caller keeps its buffer) and returns its address. `name` is what
   * error messages call the object ("job input", "state of task t1", …).
   */
  async put(bytes: Uint8Array, name = 'blob'): Promise<BlobInfo> {
    const hash = hashOf(bytes);
    if (this.entries.has(hash)) return this.info(hash)!;
    const sink = this.sink(hash, bytes.byteLength, name);
    try {
      await sink.write(0, bytes);
      return await sink.finish();
    } catch (err) {
      await sink.abort();
      throw err;
    }
  }

  /**
   * Checks the limits for an object of `size` bytes and reserves room for it; returns where its bytes
   * go (memory when it fits the memory budget, else a file). Nothing is written when a limit is hit.
   * The writer verifies the bytes against `hash` before `finish` (put hashes first, a transfer as chunks arrive).
   */
  sink(hash: BlobHash, size: number, name = 'blob'): BlobSink {
    checkBlobHash(hash, name);
    this.checkOpen();
    if (!Number.isSafeInteger(size) || size < 0) throw new DataError('BAD_INPUT', `${name} ${shortHash(hash)}: size ${size} is not a byte count`, hash);
    if (size > this.maxObjectBytes) {
      throw new DataError('TOO_LARGE', `${name} ${shortHash(hash)} of ${size} bytes exceeds the per-object maximum of ${this.maxObjectBytes} bytes`, hash);
    }
    const used = this.memoryUsed + this.diskUsed + this.reserved;
    if (used + size > this.budget) {
      throw new DataError('OVER_BUDGET',
        `${name} ${shortHash(hash)} of ${size} bytes does not fit the node's store budget of ${this.budget} bytes (${used} bytes in use)`, hash);
    }
    this.reserved += size;
    let released = false;
    const release = () => {
      if (!released) this.reserved -= size;
      released = true;
    };
    const done = {
      adoptMemory: (bytes: Buffer): BlobInfo => {
        release();
        return this.adopt(hash, size, bytes, false);
      },
      adoptFile: async (file: string): Promise<BlobInfo> => {
        release();
        await rename(file, this.fileOf(hash));
        return this.adopt(hash, size, undefined, true);
      },
      release,
    };
    if (size <= this.memoryLimit) return new MemorySink(hash, size, name, done);
    return new FileSink(hash, size, name, path.join(this.dir, `${hash}${PART}${randomBytes(6).toString('hex')}`), done);
  }

  /**
   * The blob's bytes as a Buffer: a view of the memory copy (no copy), or read from disk and verified.
   * Throws NOT_FOUND, or CORRUPT (the disk copy is discarded).
   */
  async get(hash: BlobHash): Promise<Buffer> {
    const e = this.require(hash);
    e.lastUse = ++this.clock;
    if (e.memory) return e.memory;
    const bytes = await this.readVerified(e);
    if (e.size <= this.memoryLimit && this.entries.get(hash) === e && !e.memory) {
      this.keepInMemory(e, bytes);
    }
    return bytes;
  }

  /**
   * The blob's bytes in a SharedArrayBuffer, to hand to worker threads without a copy per worker.
   * The shared copy is the store's memory copy, made once per node.
   */
  async getShared(hash: BlobHash): Promise<Uint8Array> {
    const bytes = await this.get(hash);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * `length` bytes from `offset`, for a transfer to a peer: a view of the memory copy, or a range read
   * from disk (the receiver verifies the whole; `verify` checks a disk copy when sent from the start).
   */
  async read(hash: BlobHash, offset: number, length: number): Promise<Buffer> {
    const e = this.require(hash);
    if (offset < 0 || length < 0 || offset + length > e.size) throw new DataError('BAD_INPUT', `range ${offset}+${length} outside blob ${shortHash(hash)} of ${e.size} bytes`, hash);
    e.lastUse = ++this.clock;
    if (e.memory) return e.memory.subarray(offset, offset + length);
    const fh = await open(this.fileOf(hash), 'r');
    try {
      const out = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(out, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      if (done < length) {
        this.reportCorrupt(hash, 'disk', `file is ${offset + done} bytes, expected ${e.size}`);
        await this.discard(e);
        throw new DataError('CORRUPT', `blob ${shortHash(hash)} is truncated on disk; discarded`, hash);
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  /** Reads a disk copy back and checks it; false (and discarded) when it is corrupt. */
  async verify(hash: BlobHash): Promise<boolean> {
    const e = this.require(hash);
    if (e.memory) return true;
    try {
      await this.readVerified(e);
      return true;
    } catch (err) {
      if (err instanceof DataError && err.code === 'CORRUPT') return false;
      throw err;
    }
  }

  /** Removes a blob (views already handed out stay valid). Resolves false when it was not here. */
  async delete(hash: BlobHash): Promise<boolean> {
    const e = this.entries.get(hash);
    if (!e) return false;
    await this.discard(e);
    return true;
  }

  /** Closes the store; a directory it created itself is removed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.entries.clear();
    this.memoryUsed = 0;
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }

  // ---- internals ---------------------------------------------------------------------

  private adopt(hash: BlobHash, size: number, memory: Buffer | undefined, onDisk: boolean): BlobInfo {
    this.checkOpen();
    const existing = this.entries.get(hash);
    if (existing) {
      // Two transfers of one blob raced: keep the first copy, drop the file of the second.
      if (onDisk && !existing.onDisk) {
        existing.onDisk = true;
        this.diskUsed += size;
      }
      return this.info(hash)!;
    }
    const e: Entry = { hash, size, memory: undefined, onDisk, lastUse: ++this.clock, spilling: false };
    this.entries.set(hash, e);
    if (onDisk) this.diskUsed += size;
    if (memory) this.keepInMemory(e, memory);
    return this.info(hash)!;
  }

  private keepInMemory(e: Entry, bytes: Buffer): void {
    const shared = bytes.buffer instanceof SharedArrayBuffer ? bytes : copyToShared(bytes);
    e.memory = shared;
    this.memoryUsed += e.size;
    this.spillIfNeeded();
  }

  /** Least recently used memory copies go to disk until memory is within its budget. */
  private spillIfNeeded(): void {
    if (this.memoryUsed <= this.memoryLimit) return;
    const candidates = [...this.entries.values()].filter((e) => e.memory && !e.spilling).sort((a, b) => a.lastUse - b.lastUse);
    let over = this.memoryUsed - this.memoryLimit;
    for (const e of candidates) {
      if (over <= 0) break;
      over -= e.size;
      void this.spill(e);
    }
  }

  /** The memory copy stays readable until its file is written; then memory is released. */
  private async spill(e: Entry): Promise<void> {
    e.spilling = true;
    try {
      if (!e.onDisk) {
        const part = path.join(this.dir, `${e.hash}${PART}${randomBytes(6).toString('hex')}`);
        await writeFile(part, e.memory!);
        await rename(part, this.fileOf(e.hash));
        if (this.entries.get(e.hash) !== e) {
          await rm(this.fileOf(e.hash), { force: true });
          return;
        }
        e.onDisk = true;
        this.diskUsed += e.size;
      }
      if (e.memory) {
        e.memory = undefined;
        this.memoryUsed -= e.size;
        this.spills++;
        this.events.emit('spilled', { hash: e.hash, size: e.size });
      }
    } catch (err) {
      if (!this.closed) log.warn('data', `cannot spill blob ${shortHash(e.hash)} to ${this.dir}; it stays in memory`, err);
    } finally {
      e.spilling = false;
    }
  }

  private async readVerified(e: Entry): Promise<Buffer> {
    let reason: string | undefined;
    let bytes: Buffer | undefined;
    try {
      const fh = await open(this.fileOf(e.hash), 'r');
      try {
        const actual = (await fh.stat()).size;
        if (actual !== e.size) reason = `file has ${actual} bytes, expected ${e.size}`;
        else {
          bytes = sharedBuffer(e.size);
          for (let got = 0; got < e.size;) got += (await fh.read(bytes, got, e.size - got, got)).bytesRead;
          if (hashOf(bytes) !== e.hash) reason = 'content does not match its hash';
        }
      } finally {
        await fh.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      reason = 'file is missing';
    }
    if (reason === undefined) return bytes!;
    this.reportCorrupt(e.hash, 'disk', reason);
    await this.discard(e);
    throw new DataError('CORRUPT', `blob ${shortHash(e.hash)} read back from ${this.dir}: ${reason}; discarded`, e.hash);
  }

  /** Counts and reports bytes that failed their integrity check (on arrival, or found bad on disk). */
  reportCorrupt(hash: BlobHash, where: 'disk' | 'arrival', reason: string): void {
    this.corruptions++;
    log.warn('data', `blob ${shortHash(hash)} failed its integrity check (${where}): ${reason}`);
    this.events.emit('corrupt', { hash, where, reason });
  }

  private async discard(e: Entry): Promise<void> {
    if (this.entries.get(e.hash) !== e) return;
    this.entries.delete(e.hash);
    if (e.memory) this.memoryUsed -= e.size;
    e.memory = undefined;
    if (e.onDisk) {
      this.diskUsed -= e.size;
      e.onDisk = false;
      await unlink(this.fileOf(e.hash)).catch(() => undefined);
    }
  }

  private require(hash: BlobHash): Entry {
    this.checkOpen();
    const e = this.entries.get(hash);
    if (!e) throw new DataError('NOT_FOUND', `blob ${shortHash(hash)} is not in this node's store`, hash);
    return e;
  }

  private checkOpen(): void {
    if (this.closed) throw new DataError('CLOSED', 'the object store is closed');
  }

  private fileOf(hash: BlobHash): string {
    return path.join(this.dir, hash);
  }
}

function copyToShared(bytes: Uint8Array): Buffer {
  const out = sharedBuffer(bytes.byteLength);
  out.set(bytes);
  return out;
}

function positive(value: number, what: string, allowZero = false): number {
  if (!Number.isSafeInteger(value) || value < (allowZero ? 0 : 1)) throw new RangeError(`${what} must be a whole number of bytes${allowZero ? '' : ' > 0'}, got ${value}`);
  return value;
}
