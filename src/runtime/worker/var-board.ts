/**
 * A node's global-variable values in shared memory: the node's main thread writes, every worker
 * reads without a message, so a long-running task sees a better bound at its next getVar.
 * Each slot is a seqlock: the version is odd while a write is in progress; a reader retries
 * until it sees the same even version before and after copying the bytes.
 */
import { encodeVar, MAX_VAR_BYTES, type GlobalVariables } from '../../coord/recipes/global-variables.js';
import { log } from '../../util/log.js';

/** A slot holds any value a global variable may hold (zero-filled address space; on Linux the pages no value reaches are never committed). */
const SLOT_BYTES = MAX_VAR_BYTES;
const HEADER_INTS = 2; // version, length

interface Slot {
  header: Int32Array;
  bytes: Uint8Array;
  /** The version last decoded here (per reader: each worker has its own board object) and its value. */
  version: number;
  value: unknown;
}

export class VarBoard {
  /** Each variable's slot, its views made once: a read in a hot search loop allocates nothing. */
  private readonly slots = new Map<string, Slot>();

  constructor(readonly buffer: SharedArrayBuffer, names: readonly string[]) {
    const sorted = [...names].sort();
    if (buffer.byteLength < sorted.length * (SLOT_BYTES + HEADER_INTS * 4)) throw new Error('var board buffer too small');
    sorted.forEach((name, index) => {
      const offset = index * (SLOT_BYTES + HEADER_INTS * 4);
      this.slots.set(name, {
        header: new Int32Array(buffer, offset, HEADER_INTS),
        bytes: new Uint8Array(buffer, offset + HEADER_INTS * 4, SLOT_BYTES),
        version: -1,
        value: undefined,
      });
    });
  }

  /**
   * A board for a job's variables that follows their values on this node (main thread), or undefined when the
   * job has none. A value the board cannot hold (written by something else than a member) is logged, not thrown:
   * it arrives through a watch, where a throw would end the node.
   */
  static mirror(vars: GlobalVariables, names: readonly string[], jobId: string): SharedArrayBuffer | undefined {
    if (names.length === 0) return undefined;
    const buffer = VarBoard.allocate(names);
    const board = new VarBoard(buffer, names);
    vars.on('change', ({ name, value }) => {
      try {
        board.write(name, value);
      } catch (err) {
        log.warn('node', `global variable ${name} of job ${jobId} not shown to the workers`, err);
      }
    });
    return buffer;
  }

  static allocate(names: readonly string[]): SharedArrayBuffer {
    return new SharedArrayBuffer(Math.max(1, names.length) * (SLOT_BYTES + HEADER_INTS * 4));
  }

  has(name: string): boolean {
    return this.slots.has(name);
  }

  /** Writes a value (main thread only: one writer per board). */
  write(name: string, value: unknown): void {
    const { header, bytes } = this.slot(name);
    const encoded = encodeVar(name, value);
    Atomics.add(header, 0, 1); // odd: writing
    bytes.set(encoded);
    Atomics.store(header, 1, encoded.length);
    Atomics.add(header, 0, 1); // even: stable
  }

  /** Reads a value; decodes only when it changed since the last read. */
  read(name: string): unknown {
    const slot = this.slot(name);
    const { header, bytes } = slot;
    for (;;) {
      const before = Atomics.load(header, 0);
      if (before === 0) return undefined; // never written
      if (before % 2 === 1) continue;
      if (slot.version === before) return slot.value;
      const length = Atomics.load(header, 1);
      const copy = Buffer.from(bytes.subarray(0, length));
      if (Atomics.load(header, 0) !== before) continue;
      const value: unknown = JSON.parse(copy.toString('utf8'));
      slot.version = before;
      slot.value = value;
      return value;
    }
  }

  private slot(name: string): Slot {
    const slot = this.slots.get(name);
    if (!slot) throw new Error(`global variable "${name}" is not declared in the task type's vars`);
    return slot;
  }
}
