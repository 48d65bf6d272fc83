/**
 * A simulated network for the blob transfer state machines: simulated time, per-message delays drawn
 * from a seeded generator (so messages overtake each other), loss, and holders that die — silently
 * (their messages vanish) or loudly (sends to them fail). Holders run BlobSender over their own copy
 * of the bytes, which a scenario may corrupt or truncate.
 */
import { BlobReceiver, type ReceiverAction } from '../../src/data/blob-receiver.js';
import { BlobSender } from '../../src/data/blob-sender.js';
import { chunkRange, type BlobMessage, type ChunkMessage, type FetchRequest, type RefuseMessage } from '../../src/data/transfer-protocol.js';
import { hashOf } from '../../src/data/content-hash.js';
import type { DataError } from '../../src/data/data-error.js';
import { Rng } from '../../src/util/rng.js';

export interface SimHolder {
  id: string;
  bytes: Buffer;
  /** Refuse every fetch (not a member, say). */
  refuses?: boolean;
  /** Dies when it has sent this many chunks in all. */
  diesAfterChunks?: number;
  /** A dead holder's peers see sends fail (true) or just silence (false). */
  loudDeath?: boolean;
}

export interface SimOptions {
  seed: number;
  blob: Buffer;
  holders: SimHolder[];
  chunkBytes: number;
  window: number;
  stallMs?: number;
  loss?: number;
  maxDelayMs?: number;
}

export interface SimOutcome {
  result: 'done' | 'failed' | 'stuck';
  error: DataError | undefined;
  written: Buffer;
  receiver: BlobReceiver;
  corruptReports: string[][];
  /** Largest number of chunks a holder had sent beyond what the receiver had consumed. */
  maxAhead: number;
  /** Chunks each holder sent. */
  sentBy: Map<string, number>;
  /** Every credit the receiver granted: the chunks it had consumed then, and the `upTo` it granted. */
  credits: Array<{ consumed: number; upTo: number }>;
  simulatedMs: number;
}

interface Event {
  at: number;
  order: number;
  run: () => void;
}

const RECEIVER = 'receiver';

export function simulateFetch(opts: SimOptions): SimOutcome {
  const rng = new Rng(opts.seed);
  const events: Event[] = [];
  let now = 0;
  let order = 0;
  const schedule = (delay: number, run: () => void) => events.push({ at: now + delay, order: order++, run });
  const dead = new Set<string>();
  const sentBy = new Map<string, number>();
  const corruptReports: string[][] = [];
  const written: Buffer[] = [];
  let writtenBytes = 0;
  let result: SimOutcome['result'] = 'stuck';
  let error: DataError | undefined;
  let maxAhead = 0;
  let consumed = 0;
  const credits: SimOutcome['credits'] = [];

  const receiver = new BlobReceiver({
    hash: hashOf(opts.blob), size: opts.blob.length, job: 'J', holders: opts.holders.map((h) => h.id),
    chunkBytes: opts.chunkBytes, window: opts.window, stallMs: opts.stallMs ?? 500, xferPrefix: 'r',
  });
  const holders = new Map(opts.holders.map((h) => [h.id, { spec: h, senders: new Map<string, BlobSender>() }]));

  /** Delivers a message after a random delay, unless lost or an end is dead; returns false when the send fails at once. */
  const send = (from: string, to: string, m: BlobMessage | FetchRequest): boolean => {
    const peerDead = dead.has(to) || dead.has(from);
    if (peerDead && (holders.get(to)?.spec.loudDeath ?? false)) return false;
    if (peerDead || rng.chance(opts.loss ?? 0)) return true;
    schedule(rng.int(1, opts.maxDelayMs ?? 20), () => {
      if (dead.has(to) || dead.has(from)) return;
      if (to === RECEIVER) toReceiver(from, m as BlobMessage);
      else toHolder(to, m as BlobMessage);
    });
    return true;
  };

  const apply = (actions: ReceiverAction[]) => {
    for (const a of actions) {
      if (a.kind === 'send') {
        if (a.message.type === 'blob.credit') credits.push({ consumed, upTo: a.message.upTo });
        if (!send(RECEIVER, a.to, a.message)) {
          const xfer = a.message.xfer;
          schedule(0, () => apply(receiver.onSendFailed(a.to, xfer, now, 'connection refused')));
        }
      } else if (a.kind === 'write') {
        // Writes come before the credit they earn in one batch of actions: `consumed` is current when it is sent.
        if (a.offset !== writtenBytes) throw new Error(`write at ${a.offset} after ${writtenBytes} bytes: out of order`);
        written.push(a.data);
        writtenBytes += a.data.length;
        consumed = Math.ceil(writtenBytes / opts.chunkBytes);
      } else if (a.kind === 'reset') {
        written.length = 0;
        writtenBytes = 0;
        consumed = 0;
      } else if (a.kind === 'corrupt') corruptReports.push(a.holders);
      else if (a.kind === 'done') result = 'done';
      else if (a.kind === 'failed') {
        result = 'failed';
        error = a.error;
      }
    }
  };

  const toReceiver = (from: string, m: BlobMessage) => {
    if (m.type === 'blob.chunk') apply(receiver.onChunk(from, m, now));
    else if (m.type === 'blob.refuse') apply(receiver.onRefuse(from, m, now));
  };

  const sendChunks = (holderId: string, xfer: string, sender: BlobSender, seqs: number[]) => {
    const h = holders.get(holderId)!;
    for (const seq of seqs) {
      if (dead.has(holderId)) return;
      const { offset, length } = chunkRange(seq, sender.size, sender.chunkBytes);
      const chunk: ChunkMessage = { type: 'blob.chunk', xfer, seq, size: sender.size, data: h.spec.bytes.subarray(offset, offset + length) };
      maxAhead = Math.max(maxAhead, seq + 1 - consumed);
      send(holderId, RECEIVER, chunk);
      const count = (sentBy.get(holderId) ?? 0) + 1;
      sentBy.set(holderId, count);
      if (h.spec.diesAfterChunks !== undefined && count >= h.spec.diesAfterChunks) dead.add(holderId);
    }
  };

  const toHolder = (holderId: string, m: BlobMessage) => {
    const h = holders.get(holderId)!;
    if (m.type === 'blob.fetch') {
      if (h.spec.refuses) {
        const refuse: RefuseMessage = { type: 'blob.refuse', xfer: m.xfer, code: 'REFUSED', reason: `${RECEIVER} is not a member of job ${m.job}` };
        send(holderId, RECEIVER, refuse);
        return;
      }
      const sender = new BlobSender(h.spec.bytes.length, m.chunkBytes, m.from, m.window);
      h.senders.set(m.xfer, sender);
      sendChunks(holderId, m.xfer, sender, sender.start());
    } else if (m.type === 'blob.credit') {
      const sender = h.senders.get(m.xfer);
      if (sender) sendChunks(holderId, m.xfer, sender, sender.credit(m.upTo));
    } else if (m.type === 'blob.cancel') h.senders.delete(m.xfer);
  };

  apply(receiver.start(now));
  for (let steps = 0; result === 'stuck' && steps < 1_000_000; steps++) {
    events.sort((a, b) => a.at - b.at || a.order - b.order);
    const deadline = receiver.deadline;
    const next = events[0];
    if (deadline !== undefined && (!next || deadline <= next.at)) {
      now = Math.max(now, deadline);
      apply(receiver.onTick(now));
      continue;
    }
    if (!next) break;
    events.shift();
    now = next.at;
    next.run();
  }
  return { result, error, written: Buffer.concat(written), receiver, corruptReports, maxAhead, sentBy, credits, simulatedMs: now };
}
