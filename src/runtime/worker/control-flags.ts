/**
 * Per-worker control words in shared memory, so that a running task learns in nanoseconds
 * (one atomic load, no message) whether work is wanted, whether it must migrate, or whether
 * its job was cancelled.
 */
export const WANT_SPLIT = 0;
export const MIGRATE = 1;
export const CANCEL = 2;
const WORDS_PER_WORKER = 4;

export class ControlFlags {
  readonly view: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer, private readonly slot: number) {
    this.view = new Int32Array(buffer, slot * WORDS_PER_WORKER * 4, WORDS_PER_WORKER);
  }

  static allocate(workers: number): SharedArrayBuffer {
    return new SharedArrayBuffer(Math.max(1, workers) * WORDS_PER_WORKER * 4);
  }

  static forWorker(buffer: SharedArrayBuffer, slot: number): ControlFlags {
    return new ControlFlags(buffer, slot);
  }

  get index(): number {
    return this.slot;
  }

  set(word: number, value: number): void {
    Atomics.store(this.view, word, value);
  }

  get(word: number): number {
    return Atomics.load(this.view, word);
  }

  /** Clears every word (a new task starts with a clean slate). */
  reset(): void {
    for (let i = 0; i < WORDS_PER_WORKER; i++) Atomics.store(this.view, i, 0);
  }
}
