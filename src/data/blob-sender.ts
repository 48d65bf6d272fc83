/**
 * The holder's side of one transfer, as a state machine without I/O: which chunks may be sent now.
 * It sends chunks in order from `from`, never beyond the credit the receiver granted.
 */
import { chunkCount } from './transfer-protocol.js';

export class BlobSender {
  /** Total number of chunks of the blob. */
  readonly chunks: number;
  private next: number;
  private granted: number;

  constructor(readonly size: number, readonly chunkBytes: number, from: number, window: number) {
    this.chunks = chunkCount(size, chunkBytes);
    this.next = Math.min(from, this.chunks);
    this.granted = this.next + window;
  }

  /** Chunks to send at the start. */
  start(): number[] {
    return this.take();
  }

  /** The receiver consumed chunks below `upTo - window`: returns the chunks that may go now. */
  credit(upTo: number): number[] {
    if (upTo > this.granted) this.granted = upTo;
    return this.take();
  }

  /** Every chunk has been handed out. */
  get done(): boolean {
    return this.next >= this.chunks;
  }

  private take(): number[] {
    const out: number[] = [];
    const end = Math.min(this.granted, this.chunks);
    while (this.next < end) out.push(this.next++);
    return out;
  }
}
