/**
 * Blob transfer between nodes over the node's existing Transport (no sockets of its own): the I/O
 * around the BlobReceiver and BlobSender state machines (transfer-protocol.ts has the messages).
 *
 * Receiving: `fetch` reserves room in the store (limits checked before any byte is written), asks the
 * holders one at a time, writes chunks in order into the store's sink and hands the verified blob to
 * the store. Concurrent fetches of one blob share one transfer. On a transport that places attachments
 * (TCP), a chunk the receiver would take goes from the socket straight to its place in a memory sink
 * (one copy, as a plain socket read into a buffer makes); `PlacedChunks` says why that stays safe.
 * Serving: a `blob.fetch` is answered only when `mayFetch(peer, hash, job)` allows it and the blob is
 * here; chunks go out in order within the receiver's credit, their (immutable) bytes lent to the
 * transport rather than copied into frames. A blob sent whole from disk is hashed
 * on the way out, so a copy corrupted on disk is found and discarded.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { lend } from '../transport/attachment.js';
import type { AttachmentPlacer, InboundFrame, Message, PeerAddress, Transport } from '../transport/types.js';
import { log } from '../util/log.js';
import { checkBlobHash, shortHash, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';
import { BlobReceiver, type OutgoingMessage, type ReceiverAction } from './blob-receiver.js';
import { BlobSender } from './blob-sender.js';
import { HashThread, inlineHasher, type ChunkHasher } from './chunk-hasher.js';
import type { BlobInfo, BlobSink } from './blob-sink.js';
import type { ObjectStore } from './object-store.js';
import {
  chunkHeader, chunkRange, isBlobMessage, MAX_CHUNK_BYTES, MAX_WINDOW, MIN_CHUNK_BYTES, parseBlobMessage,
  type BlobMessage, type FetchMessage, type RefuseCode,
} from './transfer-protocol.js';

/** Chunks in flight per transfer by default: credit comes every 8 (creditStep), with 8 MiB still to send. */
export const DEFAULT_WINDOW = 16;

/** Decides whether `peer` may fetch blob `hash` for `job` (e.g. it is a member of a job that references it). */
export type FetchAuthorizer = (peer: string, hash: BlobHash, job: string) => boolean | Promise<boolean>;

export interface BlobTransferOptions {
  transport: Transport;
  store: ObjectStore;
  /** Required: there is no default that lets any authenticated node read any blob. */
  mayFetch: FetchAuthorizer;
  /** Bytes per chunk (default 1 MiB). */
  chunkBytes?: number;
  /** Chunks in flight beyond what the receiver consumed (default 16: at most 16 MiB per transfer with 1 MiB chunks). */
  window?: number;
  /** A holder that sends nothing for this long is left for the next one (default 10 s). */
  stallMs?: number;
  /** Attempts per holder (default 2). */
  rounds?: number;
  /**
   * Where arriving blobs kept in memory are hashed: on a hashing thread, beside the reading of the
   * socket (default), or inline on this thread as chunks are consumed. Blobs spilled to disk are
   * hashed inline.
   */
  hashing?: 'thread' | 'inline';
  /**
   * Subscribe to the transport's messages (default true). A node that routes its frames itself passes
   * false and hands blob frames to `deliver`, so that one rule decides where a frame goes.
   */
  subscribe?: boolean;
}

export interface FetchOptions {
  size: number;
  /** Nodes holding the blob, in order of preference. */
  holders: readonly PeerAddress[];
  job: string;
  /** What error messages call the object. */
  name?: string;
}

export interface TransferStats {
  /** Transfers that completed into this store. */
  fetched: number;
  bytesIn: number;
  /** Transfers served to peers (started). */
  served: number;
  bytesOut: number;
  refused: number;
  corruptArrivals: number;
}

interface Outgoing {
  peer: PeerAddress;
  hash: BlobHash;
  sender: BlobSender;
  chain: Promise<void>;
  /** Hash of what was sent, when sent whole from disk. */
  check: Hash | undefined;
  lastActivity: number;
}

export class BlobTransferService {
  readonly stats: TransferStats = { fetched: 0, bytesIn: 0, served: 0, bytesOut: 0, refused: 0, corruptArrivals: 0 };
  private readonly transport: Transport;
  private readonly store: ObjectStore;
  private readonly mayFetch: FetchAuthorizer;
  private readonly chunkBytes: number;
  private readonly window: number;
  private readonly stallMs: number;
  private readonly rounds: number;
  private readonly hashing: 'thread' | 'inline';
  private readonly fetches = new Map<BlobHash, Promise<BlobInfo>>();
  private readonly cancels = new Set<(reason: string) => void>();
  /** Fetches in progress by transfer-id prefix: where chunks and refusals go. */
  private readonly receiving = new Map<string, (from: string, m: Message) => void>();
  /** The same fetches: where an arriving chunk's bytes may go (undefined: private memory). */
  private readonly placing = new Map<string, AttachmentPlacer>();
  private readonly outgoing = new Map<string, Outgoing>();
  private readonly prefix = randomBytes(4).toString('hex');
  private fetchCount = 0;
  private readonly off: () => void;
  private readonly offPlacer: () => void;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(opts: BlobTransferOptions) {
    if (typeof opts.mayFetch !== 'function') throw new TypeError('BlobTransferService: mayFetch (who may fetch which blob) is required');
    this.transport = opts.transport;
    this.store = opts.store;
    this.mayFetch = opts.mayFetch;
    this.chunkBytes = opts.chunkBytes ?? 1024 * 1024;
    this.window = opts.window ?? DEFAULT_WINDOW;
    this.stallMs = opts.stallMs ?? 10_000;
    this.rounds = opts.rounds ?? 2;
    this.hashing = opts.hashing ?? 'thread';
    if (this.hashing !== 'thread' && this.hashing !== 'inline') throw new RangeError(`hashing must be 'thread' or 'inline', got ${JSON.stringify(this.hashing)}`);
    if (this.chunkBytes < MIN_CHUNK_BYTES || this.chunkBytes > MAX_CHUNK_BYTES) throw new RangeError(`chunkBytes must be ${MIN_CHUNK_BYTES}..${MAX_CHUNK_BYTES}`);
    if (!Number.isInteger(this.window) || this.window < 1 || this.window > MAX_WINDOW) throw new RangeError(`window must be 1..${MAX_WINDOW}`);
    this.off = opts.subscribe === false ? () => undefined : this.transport.onMessage((from, m) => {
      if (isBlobMessage(m)) this.deliver(from, m);
    });
    this.offPlacer = this.transport.placeAttachments?.((from, header, field, frame) => {
      const xfer = header.type === 'blob.chunk' && typeof header.xfer === 'string' ? header.xfer : '';
      return this.placing.get(xfer.slice(0, xfer.lastIndexOf('.')))?.(from, header, field, frame);
    }) ?? (() => undefined);
    // Outgoing transfers whose receiver went quiet (it left, or died) are dropped.
    this.sweeper = setInterval(() => this.sweep(), Math.max(50, this.stallMs));
    this.sweeper.unref();
  }

  /**
   * Brings blob `hash` into the local store from its holders (at once if it is here already) and
   * resolves with where it is. Rejects with TOO_LARGE / OVER_BUDGET before anything is fetched, or
   * with UNAVAILABLE / REFUSED naming every holder's reason.
   */
  fetch(hash: BlobHash, opts: FetchOptions): Promise<BlobInfo> {
    checkBlobHash(hash, opts.name ?? 'blob');
    const local = this.store.info(hash);
    if (local) return Promise.resolve(local);
    let running = this.fetches.get(hash);
    if (!running) {
      running = this.run(hash, opts).finally(() => this.fetches.delete(hash));
      this.fetches.set(hash, running);
    }
    return running;
  }

  /** A blob frame (`type` starting with "blob.") from `from`; validated here, malformed ones dropped and logged. */
  deliver(from: string, m: Message): void {
    if (m.type === 'blob.chunk' || m.type === 'blob.refuse') {
      const xfer = typeof m.xfer === 'string' ? m.xfer : '';
      const to = this.receiving.get(xfer.slice(0, xfer.lastIndexOf('.')));
      if (to) to(from, m);
      else if (typeof m.xfer !== 'string') log.warn('data', `dropped a malformed ${m.type} from ${from}: no transfer id`);
    } else this.onMessage(from, m);
  }

  /** Outgoing transfers in progress (for tests and metrics). */
  get serving(): number {
    return this.outgoing.size;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.off();
    this.offPlacer();
    clearInterval(this.sweeper);
    for (const cancel of [...this.cancels]) cancel('the transfer service closed');
    this.outgoing.clear();
    await Promise.allSettled([...this.fetches.values()]);
  }

  // ---- receiving ---------------------------------------------------------------------

  private run(hash: BlobHash, opts: FetchOptions): Promise<BlobInfo> {
    if (this.closed) return Promise.reject(new DataError('CLOSED', 'the blob transfer service is closed', hash));
    let sink: BlobSink;
    try {
      sink = this.store.sink(hash, opts.size, opts.name);
    } catch (err) {
      return Promise.reject(err);
    }
    const peers = new Map(opts.holders.filter((h) => h.nodeId !== this.transport.nodeId).map((h) => [h.nodeId, h]));
    const xferPrefix = `${this.transport.nodeId}#${this.prefix}-${++this.fetchCount}`;
    const onThread = this.hashing === 'thread' && sink.inMemory;
    const receiver = new BlobReceiver({
      hash, size: opts.size, job: opts.job, holders: [...peers.keys()], chunkBytes: this.chunkBytes, window: this.window,
      stallMs: this.stallMs, rounds: this.rounds, xferPrefix, hashing: onThread ? 'outside' : 'inline',
    });
    const newHasher = (): ChunkHasher | undefined => (onThread ? threadHasher() : undefined);
    return new Promise<BlobInfo>((resolve, reject) => {
      let writes = Promise.resolve();
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const placed = new PlacedChunks();
      let hasher = newHasher();
      const finish = (err: unknown, info?: BlobInfo) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        placed.detachAll();
        hasher?.abandon();
        this.receiving.delete(xferPrefix);
        this.placing.delete(xferPrefix);
        this.cancels.delete(cancel);
        if (err) {
          void sink.abort().finally(() => reject(err));
        } else {
          this.stats.fetched++;
          log.info('data', `fetched ${opts.name ?? 'blob'} ${shortHash(hash)} (${opts.size} bytes)`);
          resolve(info!);
        }
      };
      const apply = (actions: ReceiverAction[]) => {
        for (const a of actions) {
          switch (a.kind) {
            case 'send': this.sendFor(receiver, peers.get(a.to)!, a.message, apply); break;
            case 'write':
              placed.consumed(a.offset / this.chunkBytes);
              hasher?.update(a.data);
              this.stats.bytesIn += a.data.length;
              writes = writes.then(() => sink.write(a.offset, a.data));
              writes.catch((err: unknown) => apply(receiver.cancel(`cannot store it: ${(err as Error).message}`)));
              break;
            case 'reset':
              placed.detachAll();
              hasher?.abandon();
              hasher = newHasher();
              writes = writes.then(() => sink.reset());
              break;
            case 'corrupt':
              this.stats.corruptArrivals++;
              this.store.reportCorrupt(hash, 'arrival', `from ${a.holders.join(', ')}: ${a.reason}`);
              break;
            case 'verify': {
              // Only a receiver hashing outside asks to verify, and then this fetch has a hasher.
              const digest = hasher!.digest();
              digest.then((hex) => apply(receiver.onDigest(hex, Date.now())), (err: unknown) => apply(receiver.cancel(`cannot hash it: ${(err as Error).message}`)));
              break;
            }
            case 'done': writes.then(() => sink.finish()).then((info) => finish(undefined, info), finish); break;
            case 'failed': finish(a.error); break;
          }
        }
        // One stall timer at a time: a deadline only moves later, so a timer that fires early is re-armed
        // (onTick changes nothing before the deadline) rather than replaced on every chunk.
        const deadline = receiver.deadline;
        if (deadline === undefined || settled) {
          clearTimeout(timer);
          timer = undefined;
        } else if (timer === undefined) {
          timer = setTimeout(() => {
            timer = undefined;
            apply(receiver.onTick(Date.now()));
          }, Math.max(0, deadline - Date.now()) + 1);
          timer.unref?.();
        }
      };
      const cancel = (reason: string) => apply(receiver.cancel(reason));
      this.cancels.add(cancel);
      this.receiving.set(xferPrefix, (from, m) => {
        const parsed = parseBlobMessage(m);
        if (typeof parsed === 'string') return log.warn('data', `malformed message from ${from}: ${parsed}`);
        if (parsed.type === 'blob.chunk') apply(receiver.onChunk(from, parsed, Date.now()));
        else if (parsed.type === 'blob.refuse') apply(receiver.onRefuse(from, parsed, Date.now()));
      });
      this.placing.set(xferPrefix, (from, header, field, frame) => {
        const h = chunkHeader(header, field);
        if (!h || settled || !receiver.accepts(from, h, frame.length) || placed.busy(h.seq)) return undefined;
        const region = sink.region(h.seq * this.chunkBytes, frame.length);
        if (region) placed.lease(h.seq, frame);
        return region;
      });
      apply(receiver.start(Date.now()));
    });
  }

  private sendFor(receiver: BlobReceiver, to: PeerAddress, message: OutgoingMessage, apply: (a: ReceiverAction[]) => void): void {
    const full = (message.type === 'blob.fetch' ? { ...message, replyTo: this.transport.address } : message) as Message;
    this.transport.send(to, full).catch((err: unknown) => {
      apply(receiver.onSendFailed(to.nodeId, message.xfer, Date.now(), err instanceof Error ? err.message : String(err)));
    });
  }

  // ---- serving -----------------------------------------------------------------------

  private onMessage(from: string, m: Message): void {
    if (this.closed) return;
    const parsed = parseBlobMessage(m);
    if (typeof parsed === 'string') {
      log.warn('data', `malformed message from ${from}: ${parsed}`);
      const replyTo = (m as { replyTo?: unknown }).replyTo;
      if (m.type === 'blob.fetch' && typeof m.xfer === 'string' && typeof replyTo === 'string') {
        this.refuse({ nodeId: from, address: replyTo }, m.xfer, 'BAD_REQUEST', parsed);
      }
      return;
    }
    const key = `${from}|${parsed.xfer}`;
    if (parsed.type === 'blob.fetch') void this.serve(from, key, parsed);
    else if (parsed.type === 'blob.credit') {
      const t = this.outgoing.get(key);
      if (t) this.pump(key, t, t.sender.credit(parsed.upTo));
    } else if (parsed.type === 'blob.cancel') this.outgoing.delete(key);
  }

  private async serve(from: string, key: string, m: FetchMessage): Promise<void> {
    const peer = { nodeId: from, address: m.replyTo };
    let allowed: boolean;
    try {
      allowed = await this.mayFetch(from, m.hash, m.job);
    } catch (err) {
      log.warn('data', `mayFetch threw for ${from} on blob ${shortHash(m.hash)}`, err);
      allowed = false;
    }
    if (!allowed) {
      this.stats.refused++;
      return this.refuse(peer, m.xfer, 'REFUSED', `node ${from} may not fetch blob ${shortHash(m.hash)} for job ${m.job}`);
    }
    const info = this.store.info(m.hash);
    if (!info) return this.refuse(peer, m.xfer, 'NOT_FOUND', `blob ${shortHash(m.hash)} is not held by ${this.transport.nodeId}`);
    this.stats.served++;
    const t: Outgoing = {
      peer, hash: m.hash, sender: new BlobSender(info.size, m.chunkBytes, m.from, m.window), chain: Promise.resolve(),
      check: info.where === 'disk' && m.from === 0 ? createHash('sha256') : undefined, lastActivity: Date.now(),
    };
    this.outgoing.set(key, t);
    this.pump(key, t, t.sender.start());
  }

  /** Reads and sends chunks in order; sends are not awaited one by one (the credit window bounds them). */
  private pump(key: string, t: Outgoing, seqs: number[]): void {
    t.lastActivity = Date.now();
    for (const seq of seqs) {
      t.chain = t.chain.then(async () => {
        if (this.outgoing.get(key) !== t) return;
        const { offset, length } = chunkRange(seq, t.sender.size, t.sender.chunkBytes);
        const data = await this.store.read(t.hash, offset, length);
        t.check?.update(data);
        this.stats.bytesOut += length;
        // Blob bytes never change (content-addressed), so the transport may write them without a copy.
        this.transport.send(t.peer, { type: 'blob.chunk', xfer: key.slice(key.indexOf('|') + 1), seq, size: t.sender.size, data: lend(data) })
          .catch(() => this.outgoing.delete(key));
        if (seq === t.sender.chunks - 1) await this.finishServing(key, t);
      }).catch((err: unknown) => {
        this.outgoing.delete(key);
        this.refuse(t.peer, key.slice(key.indexOf('|') + 1), 'FAILED', `cannot read blob ${shortHash(t.hash)}: ${(err as Error).message}`);
      });
    }
  }

  private async finishServing(key: string, t: Outgoing): Promise<void> {
    this.outgoing.delete(key);
    if (t.check && t.check.digest('hex') !== t.hash) {
      // What we just sent from disk is not the blob: the receiver will refuse it; we discard our copy.
      log.warn('data', `blob ${shortHash(t.hash)} on disk does not match its hash; discarded`);
      this.store.reportCorrupt(t.hash, 'disk', 'sent content does not match its hash');
      await this.store.delete(t.hash);
    }
  }

  private refuse(peer: PeerAddress, xfer: string, code: RefuseCode, reason: string): void {
    const message: BlobMessage = { type: 'blob.refuse', xfer, code, reason };
    this.transport.send(peer, message).catch(() => undefined);
  }

  private sweep(): void {
    const idle = Date.now() - 2 * this.stallMs;
    for (const [key, t] of this.outgoing) if (t.lastActivity < idle) this.outgoing.delete(key);
  }
}

/** Hashes arriving blobs beside the reading of sockets (one thread per process, started on first use). */
const hashThread = new HashThread();
let threadFailureLogged = false;

/** A hasher on the hashing thread, or on this one if no thread can be started (said once in the log). */
function threadHasher(): ChunkHasher {
  try {
    return hashThread.hasher();
  } catch (err) {
    if (!threadFailureLogged) log.warn('data', 'cannot start the hashing thread; hashing arriving blobs inline', err);
    threadFailureLogged = true;
    return inlineHasher();
  }
}

/**
 * Chunks of one fetch whose bytes the transport is copying straight into the sink's memory, by
 * sequence number. The rule that keeps the SHA-256 honest: a region is hashed when its chunk is
 * consumed, so from then on nothing may write it. A region is lent only while the receiver would
 * take that chunk (not consumed, not waiting) and no other frame is still writing it; a frame still
 * writing a region when that region is consumed (a stale or duplicate copy) is detached at once (its
 * remaining bytes go to private memory), and so is every frame still writing when the sink starts
 * over or the fetch ends.
 */
class PlacedChunks {
  private readonly frames = new Map<number, InboundFrame>();

  /** Another frame is still writing chunk `seq`'s region. */
  busy(seq: number): boolean {
    return this.frames.get(seq)?.writesToPlace ?? false;
  }

  lease(seq: number, frame: InboundFrame): void {
    this.frames.set(seq, frame);
  }

  /** Chunk `seq` was consumed (hashed): no frame may write its region any more (the one that delivered it is complete). */
  consumed(seq: number): void {
    this.frames.get(seq)?.detach();
    this.frames.delete(seq);
  }

  detachAll(): void {
    for (const frame of this.frames.values()) frame.detach();
    this.frames.clear();
  }
}
