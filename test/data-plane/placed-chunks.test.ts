/**
 * Chunks whose bytes the transport copies straight into the receiving store's memory: only a chunk the
 * receiver would take is placed, and a frame still writing a chunk's place when that chunk is taken
 * from another copy (a stalled holder's late bytes) is detached, so the stored blob is exactly the
 * bytes that were hashed. The transport here is scripted: the test plays the holders frame by frame.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { BlobTransferService } from '../../src/data/blob-transfer.js';
import { hashOf } from '../../src/data/content-hash.js';
import { ObjectStore } from '../../src/data/object-store.js';
import { InboundAttachment } from '../../src/transport/attachment.js';
import type { AttachmentPlacer, Message, MessageHandler, PeerAddress, Transport } from '../../src/transport/types.js';
import { waitFor, withDeadline } from '../support/wait.js';

const CHUNK = 16 * 1024;

class ScriptedTransport implements Transport {
  readonly nodeId = 'r';
  readonly address = 'scripted://r';
  readonly sent: Array<{ to: string; message: Message }> = [];
  private readonly handlers = new Set<MessageHandler>();
  private placer: AttachmentPlacer | undefined;

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  async send(to: PeerAddress, message: Message): Promise<void> {
    this.sent.push({ to: to.nodeId, message });
  }

  onMessage(handler: MessageHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  placeAttachments(placer: AttachmentPlacer): () => void {
    this.placer = placer;
    return () => (this.placer = undefined);
  }

  /** The header of a chunk frame from `from` has arrived: its bytes go where the placer says. */
  begin(from: string, header: Message, length: number): InboundAttachment {
    const frame = new InboundAttachment(length);
    frame.place(this.placer?.(from, header, 'data', frame));
    return frame;
  }

  /** The frame is complete: the message is delivered as the TCP transport would. */
  deliver(from: string, header: Message, frame: InboundAttachment): void {
    assert.ok(frame.complete);
    for (const h of this.handlers) h(from, { ...header, data: frame.target });
  }

  fetchTo(holder: string): string | undefined {
    return this.sent.find((s) => s.to === holder && s.message.type === 'blob.fetch')?.message.xfer as string | undefined;
  }
}

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

describe('chunks placed straight into the receiving store', { timeout: 60_000 }, () => {
  it('detaches a stalled holder\'s frame when its chunk comes from another: the blob stored is the blob hashed', async () => {
    const transport = new ScriptedTransport();
    const store = await ObjectStore.open();
    const service = new BlobTransferService({ transport, store, mayFetch: () => false, chunkBytes: CHUNK, window: 8, stallMs: 300 });
    closers.push(async () => {
      await service.close();
      await store.close();
    });
    const blob = randomBytes(4 * CHUNK);
    const hash = hashOf(blob);
    const size = blob.length;
    const fetched = service.fetch(hash, { size, holders: [{ nodeId: 'a', address: 'scripted://a' }, { nodeId: 'b', address: 'scripted://b' }], job: 'J' });
    await waitFor(() => transport.fetchTo('a') !== undefined, 'the fetch to a');
    const xa = transport.fetchTo('a')!;
    const chunk = (seq: number) => blob.subarray(seq * CHUNK, (seq + 1) * CHUNK);

    // a starts chunk 0 (placed in the store's memory), then stalls halfway.
    const late = transport.begin('a', { type: 'blob.chunk', xfer: xa, seq: 0, size }, CHUNK);
    assert.ok(late.writesToPlace, 'a chunk the receiver takes is placed');
    late.fill(chunk(0).subarray(0, CHUNK / 2));
    await waitFor(() => transport.fetchTo('b') !== undefined, 'the receiver to leave a for b', 10_000);
    const xb = transport.fetchTo('b')!;

    // b sends chunk 0: not placed while a's frame still writes there; taken from private memory.
    const h0 = { type: 'blob.chunk', xfer: xb, seq: 0, size };
    const b0 = transport.begin('b', h0, CHUNK);
    assert.equal(b0.writesToPlace, false, 'a place another frame is writing is not lent again');
    b0.fill(chunk(0));
    transport.deliver('b', h0, b0);
    assert.equal(late.writesToPlace, false, 'a\'s frame was detached when chunk 0 was taken');
    // a's late bytes are garbage; they must not reach the stored blob.
    late.fill(Buffer.alloc(CHUNK / 2, 0xff));

    const again = transport.begin('b', h0, CHUNK);
    assert.equal(again.writesToPlace, false, 'a chunk already taken is not placed');
    const stale = transport.begin('a', { type: 'blob.chunk', xfer: xa, seq: 1, size }, CHUNK);
    assert.equal(stale.writesToPlace, false, 'a chunk of a transfer the receiver left is not placed');
    const odd = transport.begin('b', { type: 'blob.chunk', xfer: xb, seq: 'one', size }, CHUNK);
    assert.equal(odd.writesToPlace, false, 'a malformed header is not placed');
    const short = transport.begin('b', { type: 'blob.chunk', xfer: xb, seq: 1, size }, CHUNK - 1);
    assert.equal(short.writesToPlace, false, 'a chunk of the wrong length is not placed');

    for (const seq of [1, 2, 3]) {
      const h = { type: 'blob.chunk', xfer: xb, seq, size };
      const f = transport.begin('b', h, CHUNK);
      assert.ok(f.writesToPlace, `chunk ${seq} is placed`);
      f.fill(chunk(seq));
      transport.deliver('b', h, f);
    }
    const info = await withDeadline(fetched, 'the fetch', 10_000);
    assert.equal(info.hash, hash);
    const stored = await store.get(hash);
    assert.ok(stored.equals(blob), 'the stored blob holds no byte of a\'s late frame');
    assert.equal(hashOf(stored), hash);
  });
});
