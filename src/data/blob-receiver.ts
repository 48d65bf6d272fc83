/**
 * The receiving side of a blob fetch, as a state machine without I/O: events in (chunks, refusals,
 * failed sends, the passing of time), actions out (messages to send, in-order writes to the sink,
 * completion). The node's BlobTransferService and the simulated network of the tests drive it alike.
 *
 * - One holder at a time; chunks are consumed in order (out-of-order ones wait, at most a window of
 *   them) and hashed as they are consumed, so integrity costs no second pass. With `hashing:
 *   'outside'` the I/O layer hashes what it writes, in order (on another thread, say), and reports
 *   the digest of the whole blob with `onDigest`; the verdict is the state machine's either way.
 * - A holder that refuses, whose send fails, that sends nothing for `stallMs`, or whose chunks do not
 *   fit the blob, is left; the fetch resumes from the first missing chunk with the next holder.
 * - A blob whose hash does not match at the end is discarded and fetched again from the start,
 *   preferring holders that did not contribute to the bad copy; a holder that alone produced a bad
 *   copy is not asked again.
 * - Each holder is tried at most `rounds` times in a row without progress; then the fetch fails,
 *   naming every holder's reason.
 */
import { createHash, type Hash } from 'node:crypto';
import { shortHash, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';
import {
  chunkCount, chunkRange, type CancelMessage, type ChunkHeader, type ChunkMessage, type CreditMessage, type FetchRequest, type RefuseMessage,
} from './transfer-protocol.js';

export interface ReceiverOptions {
  hash: BlobHash;
  size: number;
  job: string;
  /** Node ids holding the blob, in order of preference. */
  holders: readonly string[];
  chunkBytes: number;
  window: number;
  /** A holder that sends nothing for this long is left for the next. */
  stallMs: number;
  /** Attempts per holder before giving up (default 2). */
  rounds?: number;
  /** Makes this fetch's transfer ids unique (e.g. "<nodeId>#<n>"). */
  xferPrefix: string;
  /** Who hashes the consumed chunks: this state machine (default) or the I/O layer ('verify' action, then `onDigest`). */
  hashing?: 'inline' | 'outside';
}

export type OutgoingMessage = FetchRequest | CreditMessage | CancelMessage;

export type ReceiverAction =
  | { kind: 'send'; to: string; message: OutgoingMessage }
  | { kind: 'write'; offset: number; data: Buffer }
  /** Everything written so far is void: the sink starts over (and, hashing outside, the digest too). */
  | { kind: 'reset' }
  /** Hashing outside: every chunk has been written; report the SHA-256 of what was written with `onDigest`. */
  | { kind: 'verify' }
  | { kind: 'corrupt'; holders: string[]; reason: string }
  | { kind: 'done' }
  | { kind: 'failed'; error: DataError };

interface HolderState {
  tries: number;
  bad: boolean;
  suspect: boolean;
  reason: string | undefined;
}

export interface ReceiverStats {
  attempts: number;
  restarts: number;
  chunks: number;
  duplicates: number;
}

/** Chunks consumed between two credits: half the window (rounded up). */
export function creditStep(window: number): number {
  return Math.ceil(window / 2);
}

export class BlobReceiver {
  readonly chunks: number;
  readonly stats: ReceiverStats = { attempts: 0, restarts: 0, chunks: 0, duplicates: 0 };
  private status: 'new' | 'fetching' | 'verifying' | 'done' | 'failed' = 'new';
  private current: { xfer: string; holder: string; from: number } | undefined;
  private contiguous = 0;
  /** The credit the current holder has (it may send chunks below this). */
  private credited = 0;
  private readonly pending = new Map<number, Buffer>();
  private digest: Hash = createHash('sha256');
  private contributors = new Set<string>();
  private readonly holders = new Map<string, HolderState>();
  private lastProgress = 0;
  private xfers = 0;
  private readonly rounds: number;

  constructor(private readonly opts: ReceiverOptions) {
    this.chunks = chunkCount(opts.size, opts.chunkBytes);
    this.rounds = opts.rounds ?? 2;
    for (const h of opts.holders) this.holders.set(h, { tries: 0, bad: false, suspect: false, reason: undefined });
  }

  get state(): 'new' | 'fetching' | 'verifying' | 'done' | 'failed' {
    return this.status;
  }

  /** The holder asked now, if any. */
  get holder(): string | undefined {
    return this.current?.holder;
  }

  /** When `tick` must be called next (undefined: no timer needed). */
  get deadline(): number | undefined {
    return this.status === 'fetching' ? this.lastProgress + this.opts.stallMs : undefined;
  }

  start(now: number): ReceiverAction[] {
    if (this.status !== 'new') return [];
    this.status = 'fetching';
    if (this.chunks === 0) return this.finish(now, []);
    return this.next(now, []);
  }

  onChunk(from: string, m: ChunkMessage, now: number): ReceiverAction[] {
    if (!this.isCurrent(from, m.xfer)) return [];
    const out: ReceiverAction[] = [];
    const { length } = m.seq < this.chunks ? chunkRange(m.seq, this.opts.size, this.opts.chunkBytes) : { length: -1 };
    if (m.size !== this.opts.size) return this.leave(now, out, `holds ${m.size} bytes, expected ${this.opts.size}`, true);
    if (length < 0 || m.data.length !== length || m.seq >= this.contiguous + 2 * this.opts.window) {
      return this.leave(now, out, `sent chunk ${m.seq} of ${m.data.length} bytes, outside the blob or its credit`, true);
    }
    if (m.seq < this.contiguous || this.pending.has(m.seq)) {
      this.stats.duplicates++;
      return out;
    }
    this.pending.set(m.seq, m.data);
    const before = this.contiguous;
    for (let data = this.pending.get(this.contiguous); data; data = this.pending.get(this.contiguous)) {
      this.pending.delete(this.contiguous);
      if (this.opts.hashing !== 'outside') this.digest.update(data);
      out.push({ kind: 'write', offset: this.contiguous * this.opts.chunkBytes, data });
      this.contiguous++;
      this.stats.chunks++;
    }
    if (this.contiguous === before) return out;
    this.lastProgress = now;
    this.contributors.add(from);
    if (this.contiguous === this.chunks) return this.finish(now, out);
    // Credit in steps of half a window, not per chunk: the holder always has at least half a window to
    // send while a credit travels, and each credit costs both sides a frame, a TLS record and a wake-up.
    const upTo = Math.min(this.contiguous + this.opts.window, this.chunks);
    if (upTo - this.credited >= creditStep(this.opts.window) || upTo === this.chunks && upTo > this.credited) {
      this.credited = upTo;
      out.push({ kind: 'send', to: from, message: { type: 'blob.credit', xfer: m.xfer, upTo } });
    }
    return out;
  }

  /**
   * Whether a chunk with this header and `length` bytes would be taken if it arrived now: from the
   * holder asked, within the blob and the credit, neither consumed nor waiting already. The I/O layer
   * asks before the bytes arrive, to have them put straight where they belong. Changes nothing.
   */
  accepts(from: string, h: ChunkHeader, length: number): boolean {
    if (!this.isCurrent(from, h.xfer) || h.size !== this.opts.size || h.seq >= this.chunks) return false;
    if (h.seq < this.contiguous || h.seq >= this.contiguous + 2 * this.opts.window || this.pending.has(h.seq)) return false;
    return chunkRange(h.seq, this.opts.size, this.opts.chunkBytes).length === length;
  }

  onRefuse(from: string, m: RefuseMessage, now: number): ReceiverAction[] {
    if (!this.isCurrent(from, m.xfer)) return [];
    return this.leave(now, [], `refused (${m.code}): ${m.reason}`, true, false);
  }

  /** A message to `to` for transfer `xfer` could not be sent (the holder is unreachable). */
  onSendFailed(to: string, xfer: string, now: number, reason: string): ReceiverAction[] {
    if (!this.isCurrent(to, xfer)) return [];
    return this.leave(now, [], `unreachable: ${reason}`, false, false);
  }

  onTick(now: number): ReceiverAction[] {
    if (this.status !== 'fetching' || now < this.lastProgress + this.opts.stallMs) return [];
    return this.leave(now, [], `sent nothing for ${this.opts.stallMs} ms`, false);
  }

  /** Hashing outside: the SHA-256 (hex) of everything written since the start or the last reset. */
  onDigest(actual: string, now: number): ReceiverAction[] {
    if (this.status !== 'verifying') return [];
    this.status = 'fetching';
    return this.conclude(actual, now, []);
  }

  /** Gives up (the caller no longer wants the blob). */
  cancel(reason: string): ReceiverAction[] {
    if (this.status !== 'fetching' && this.status !== 'verifying') return [];
    const out: ReceiverAction[] = [];
    this.abandonCurrent(out);
    return this.fail(out, new DataError('UNAVAILABLE', `fetch of blob ${shortHash(this.opts.hash)} cancelled: ${reason}`, this.opts.hash));
  }

  // ---- internals ---------------------------------------------------------------------

  private isCurrent(from: string, xfer: string): boolean {
    return this.status === 'fetching' && this.current !== undefined && this.current.xfer === xfer && this.current.holder === from;
  }

  /** Leaves the current holder (marked bad when it can never deliver) and asks the next. */
  private leave(now: number, out: ReceiverAction[], reason: string, bad: boolean, cancel = true): ReceiverAction[] {
    const { holder, from } = this.current!;
    const h = this.holders.get(holder)!;
    h.reason = reason;
    if (bad) h.bad = true;
    // A holder that delivered something before it stalled is worth asking again: only fruitless attempts count.
    else if (this.contiguous > from) h.tries = 0;
    if (cancel) this.abandonCurrent(out);
    this.current = undefined;
    return this.next(now, out);
  }

  private abandonCurrent(out: ReceiverAction[]): void {
    if (this.current) out.push({ kind: 'send', to: this.current.holder, message: { type: 'blob.cancel', xfer: this.current.xfer } });
    this.current = undefined;
  }

  /** Asks the next holder for the rest of the blob: untried and unsuspected holders first, in order. */
  private next(now: number, out: ReceiverAction[]): ReceiverAction[] {
    const previous = this.current?.holder;
    const order = [...this.holders.entries()].filter(([, h]) => !h.bad && h.tries < this.rounds);
    if (order.length === 0) return this.fail(out, this.unavailable());
    order.sort(([a, ha], [b, hb]) => Number(ha.suspect) - Number(hb.suspect) || ha.tries - hb.tries || Number(a === previous) - Number(b === previous));
    const [holder, h] = order[0]!;
    h.tries++;
    this.stats.attempts++;
    const xfer = `${this.opts.xferPrefix}.${++this.xfers}`;
    this.current = { xfer, holder, from: this.contiguous };
    this.credited = this.contiguous + this.opts.window;
    this.pending.clear();
    this.lastProgress = now;
    out.push({
      kind: 'send', to: holder,
      message: {
        type: 'blob.fetch', xfer, hash: this.opts.hash, size: this.opts.size, job: this.opts.job,
        from: this.contiguous, chunkBytes: this.opts.chunkBytes, window: this.opts.window,
      },
    });
    return out;
  }

  private finish(now: number, out: ReceiverAction[]): ReceiverAction[] {
    if (this.opts.hashing !== 'outside') return this.conclude(this.digest.digest('hex'), now, out);
    this.status = 'verifying';
    this.current = undefined;
    out.push({ kind: 'verify' });
    return out;
  }

  /** The verdict on a complete copy whose content hashes to `actual`. */
  private conclude(actual: string, now: number, out: ReceiverAction[]): ReceiverAction[] {
    if (actual === this.opts.hash) {
      this.status = 'done';
      this.current = undefined;
      out.push({ kind: 'done' });
      return out;
    }
    // A bad copy: start over, away from whoever contributed to it.
    const contributors = [...this.contributors];
    const reason = `content hashes to ${shortHash(actual)}`;
    out.push({ kind: 'corrupt', holders: contributors, reason });
    for (const c of contributors) {
      const h = this.holders.get(c)!;
      h.reason = `sent a corrupt copy (${reason})`;
      if (contributors.length === 1) h.bad = true;
      else h.suspect = true;
    }
    this.stats.restarts++;
    this.contiguous = 0;
    this.pending.clear();
    this.digest = createHash('sha256');
    this.contributors = new Set();
    this.current = undefined;
    out.push({ kind: 'reset' });
    if (this.chunks === 0) return this.fail(out, this.unavailable());
    return this.next(now, out);
  }

  private fail(out: ReceiverAction[], error: DataError): ReceiverAction[] {
    this.status = 'failed';
    this.current = undefined;
    this.pending.clear();
    out.push({ kind: 'failed', error });
    return out;
  }

  private unavailable(): DataError {
    const states = [...this.holders.entries()];
    const reasons = states.map(([id, h]) => `${id}: ${h.reason ?? 'not asked'}`).join('; ');
    const allRefused = states.length > 0 && states.every(([, h]) => h.reason?.startsWith('refused (REFUSED)'));
    return new DataError(allRefused ? 'REFUSED' : 'UNAVAILABLE',
      `blob ${shortHash(this.opts.hash)} (${this.opts.size} bytes, job ${this.opts.job}) could not be fetched from ${states.length === 0 ? 'any holder (none known)' : reasons}`,
      this.opts.hash);
  }
}
