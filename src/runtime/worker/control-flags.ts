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
 * Spawn reports of the slot (children spawned or split off) the node has not yet recorded: the worker adds one
 * per report and waits while its job's window is full; the node takes one off per report recorded (or dropped).
 * Not a request word: a task pipelined behind another does not clear it (its predecessor's reports may still be recording).
 */
export const SPAWNS_UNRECORDED = 3;
/** The words a new task starts with cleared: the requests (split, migrate, cancel). */
const REQUEST_WORDS = 3;
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

  /**
   * Worker side: counts one more unrecorded spawn report if fewer than `window` are, without waiting;
   * false when the window is full.
   */
  takeSpawnRoom(window: number): boolean {
    for (;;) {
      const current = Atomics.load(this.view, SPAWNS_UNRECORDED);
      if (current >= window) return false;
      if (Atomics.compareExchange(this.view, SPAWNS_UNRECORDED, current, current + 1) === current) return true;
    }
  }

  /**
   * Worker side: waits (blocking the thread, up to `sliceMs` per look) until fewer than `window` spawn reports
   * are unrecorded, then counts one more. `giveUp` is asked after every slice: true ends the wait without
   * room (the count goes up all the same); it is asked before the first wait too. Returns whether room was there (false: given up).
   */
  awaitSpawnRoom(window: number, giveUp: () => boolean, sliceMs = 50): boolean {
    for (;;) {
      if (this.takeSpawnRoom(window)) return true;
      if (giveUp()) {
        Atomics.add(this.view, SPAWNS_UNRECORDED, 1);
        return false;
      }
      const seen = Atomics.load(this.view, SPAWNS_UNRECORDED);
      if (seen >= window) Atomics.wait(this.view, SPAWNS_UNRECORDED, seen, sliceMs);
    }
  }

  /** Node side: `count` spawn reports were recorded or dropped; a worker waiting for room is woken. Never below zero. */
  spawnsRecorded(count: number): void {
    for (;;) {
      const current = Atomics.load(this.view, SPAWNS_UNRECORDED);
      const next = Math.max(0, current - count);
      if (Atomics.compareExchange(this.view, SPAWNS_UNRECORDED, current, next) === current) break;
    }
    Atomics.notify(this.view, SPAWNS_UNRECORDED);
  }

  /** How many spawn reports of the slot are unrecorded. */
  get spawnsUnrecorded(): number {
    return Atomics.load(this.view, SPAWNS_UNRECORDED);
  }

  /** Forgets the unrecorded count (the slot's thread was replaced, or starts afresh: see WorkerPool.runBatch). */
  clearSpawns(): void {
    Atomics.store(this.view, SPAWNS_UNRECORDED, 0);
  }

  /** Clears the request words and the budget (a new task starts with a clean slate); progress is cumulative. */
  reset(): void {
    for (let i = 0; i < REQUEST_WORDS; i++) Atomics.store(this.view, i, 0);
    Atomics.store(this.wide, BUDGET, NONE); // on every task start: no number-to-BigInt conversion here
    Atomics.store(this.wide, SPLIT_WANT, NONE);
  }
}
