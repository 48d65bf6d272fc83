/**
 * A sender's record of the blobs a receiver holds (a worker thread, a sandbox process): the sender
 * decides what the receiver keeps, so each blob crosses once while it is kept, and nothing is asked
 * back. Kept within a byte budget, least recently used first; the blobs a message needs are never
 * dropped by it.
 */
export class HeldBlobs {
  /** hash → size, in order of last use (oldest first). */
  private readonly held = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly budgetBytes = 512 * 1024 * 1024) {}

  /**
   * For a message that needs `needed` (hash → size): which blobs to send with it, and which the receiver
   * drops before (the least recently used beyond the budget). The record is updated as if delivered.
   */
  plan(needed: Readonly<Record<string, number>>): { send: string[]; drop: string[] } {
    const send: string[] = [];
    for (const [hash, size] of Object.entries(needed)) {
      if (this.held.has(hash)) this.held.delete(hash);
      else {
        send.push(hash);
        this.bytes += size;
      }
      this.held.set(hash, size); // most recent last
    }
    const drop: string[] = [];
    for (const [hash, size] of this.held) {
      if (this.bytes <= this.budgetBytes || hash in needed) break;
      this.held.delete(hash);
      this.bytes -= size;
      drop.push(hash);
    }
    return { send, drop };
  }

  /** The receiver is gone or was replaced: it holds nothing. */
  clear(): void {
    this.held.clear();
    this.bytes = 0;
  }
}
