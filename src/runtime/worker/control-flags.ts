/**
 * Per-worker control words in shared memory, so that a running task learns in nanoseconds
 * (one atomic load, no message) whether work is wanted, whether it must migrate, or whether
 * its job was cancelled — and so that it can report progress and read its budget without one.
 * Wide words are 64-bit (BigInt64Array): counters that outlive 2^31 units stay exact.
 */
export const WANT_SPLIT = 0;
export const MIGRATE = 1;
export const CANCEL = 2;
/**
 * Wide words: cumulative progress units of the slot, the granted budget (-1: none), the amount a split
 * request wants (-1: any), and when progress last moved (process.hrtime nanoseconds, 0: never).
 */
export const PROGRESS = 0;
export const BUDGET = 1;
export const SPLIT_WANT = 2;
export const PROGRESS_AT = 3;
const WORDS_PER_WORKER = 4;
const WIDE_PER_WORKER = 4;
const SLOT_BYTES = WORDS_PER_WORKER * 4 + WIDE_PER_WORKER * 8; // 48: keeps every wide view 8-byte aligned
const NONE = -1n;

export class ControlFlags {
  readonly view: Int32Array;
  readonly wide: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer, private readonly slot: number) {
    this.view = new Int32Array(buffer, slot * SLOT_BYTES, WORDS_PER_WORKER);
    this.wide = new BigInt64Array(buffer, slot * SLOT_BYTES + WORDS_PER_WORKER * 4, WIDE_PER_WORKER);
  }

  static allocate(workers: number): SharedArrayBuffer {
    const buffer = new SharedArrayBuffer(Math.max(1, workers) * SLOT_BYTES);
    for (let i = 0; i < Math.max(1, workers); i++) {
      const f = new ControlFlags(buffer, i);
      f.setWide(BUDGET, -1);
      f.setWide(SPLIT_WANT, -1);
    }
    return buffer;
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

  setWide(word: number, value: number): void {
    Atomics.store(this.wide, word, BigInt(Math.trunc(value)));
  }

  getWide(word: number): number {
    return Number(Atomics.load(this.wide, word));
  }

  addWide(word: number, amount: number): void {
    Atomics.add(this.wide, word, BigInt(Math.trunc(amount)));
  }

  /**
   * Adds progress, then stamps when (the count first: a reader that sees the same stamp before and
   * after reading the count has a count that belongs to it).
   */
  addProgress(amount: number): void {
    Atomics.add(this.wide, PROGRESS, BigInt(Math.trunc(amount)));
    Atomics.store(this.wide, PROGRESS_AT, process.hrtime.bigint());
  }

  /** The progress count and when it last moved (hrtime ns), or undefined if a writer was between the two words. */
  progressSample(): { units: number; atNs: bigint } | undefined {
    const before = Atomics.load(this.wide, PROGRESS_AT);
    const units = Number(Atomics.load(this.wide, PROGRESS));
    return Atomics.load(this.wide, PROGRESS_AT) === before ? { units, atNs: before } : undefined;
  }

  /** Clears the request words and the budget (a new task starts with a clean slate); progress is cumulative. */
  reset(): void {
    for (let i = 0; i < WORDS_PER_WORKER; i++) Atomics.store(this.view, i, 0);
    Atomics.store(this.wide, BUDGET, NONE); // on every task start: no number-to-BigInt conversion here
    Atomics.store(this.wide, SPLIT_WANT, NONE);
  }
}
