import type { BlobRef } from '../../data/blob-directory.js';
import { decode, encode } from '../../util/codec.js';

/**
 * A task's durable record in its job's ledger (the termination list of seed 000 §3.5, where
 * each entry also carries the task's latest checkpoint). A record exists from the moment its
 * parent split it off until it completes, and names the node that owns (runs) it.
 */
export interface TaskRecord {
  /** Owning node id; '' while unowned (the root before any node claimed it). */
  owner: string;
  /** The task's state at its latest checkpoint (creation, a split, a migration). */
  state: unknown;
  /** Its result contribution up to that checkpoint (undefined: nothing yet). */
  partial: unknown;
  /** A large checkpoint lives in the data plane: `{ state, partial }` encoded as this blob (then both are null here). */
  ref?: BlobRef;
}

/** A task as it moves between nodes: its record plus the ledger version the sender last saw. */
export interface TaskSnapshot {
  id: string;
  state: unknown;
  partial: unknown;
  version: number;
  /** Where the record's state lives when it is large (an offer carries only this; the receiver obtains it). */
  ref?: BlobRef;
  /**
   * A spawned child as its worker encoded it: its first ledger record, `{ owner, state, partial: undefined }`.
   * The node writes these bytes to the ledger and sends them to the worker that runs the task, and
   * decodes `state` only if something on this thread asks for it (a transfer, a retry, locality).
   */
  encoded?: Uint8Array;
}

/**
 * Spawned children's first ledger records, encoded on the worker that spawned them (the node's thread
 * then neither encodes nor copies their states): one buffer, child i at `bytes[ends[i - 1] ?? 0, ends[i])`.
 */
export interface EncodedRecords {
  bytes: Uint8Array;
  ends: number[];
}

/** A child's first record (owner `owner`, no partial result yet), encoded: also a copy of its state at spawn. */
export function encodeRecord(owner: string, state: unknown): Buffer {
  return encode({ owner, state, partial: undefined } satisfies TaskRecord);
}

/** The state in a record. */
export function recordState(record: Uint8Array): unknown {
  return decode<TaskRecord>(record).state;
}

/** Children's encoded first records, joined into one buffer of their own. */
export function joinRecords(parts: readonly Uint8Array[]): EncodedRecords {
  const ends: number[] = [];
  let total = 0;
  for (const p of parts) ends.push((total += p.length));
  // A buffer of its own (not a slice of a pool): a message copies a view's whole underlying buffer.
  const bytes = new Uint8Array(total);
  for (let i = 0; i < parts.length; i++) bytes.set(parts[i]!, i === 0 ? 0 : ends[i - 1]!);
  return { bytes, ends };
}

/** Encodes children's first records (owner `owner`) into one buffer. */
export function encodeRecords(owner: string, states: readonly unknown[]): EncodedRecords {
  return joinRecords(states.map((state) => encodeRecord(owner, state)));
}

/**
 * A new task as its spawning worker encoded it: `state` is decoded on first use. The getter is the
 * class's, so a spread copy would lose it: code that copies a snapshot names its fields (as offers do).
 */
class EncodedTask implements TaskSnapshot {
  readonly partial = undefined;
  readonly version = 0;
  private decoded: { value: unknown } | undefined;

  constructor(readonly id: string, readonly encoded: Buffer) {}

  get state(): unknown {
    return (this.decoded ??= { value: recordState(this.encoded) }).value;
  }
}

/** Snapshots of new tasks from their encoded records (each a view of the records' buffer, no copy). */
export function encodedSnapshots(ids: readonly string[], records: EncodedRecords): TaskSnapshot[] {
  const { bytes, ends } = records;
  const out: TaskSnapshot[] = [];
  for (let i = 0, start = 0; i < ids.length; start = ends[i++]!) {
    out.push(new EncodedTask(ids[i]!, Buffer.from(bytes.buffer, bytes.byteOffset + start, ends[i]! - start)));
  }
  return out;
}

/**
 * The data of a ledger transaction's marker (`txns/<id>`): the node that committed it and the result
 * contributions of the tasks it completed. `tasks[i]`, when present, is how many completed tasks
 * `results[i]` stands for (tasks run inline after their parent fold into one contribution); 1 otherwise.
 */
export interface TxnMarker {
  node: string;
  results: unknown[];
  tasks?: number[];
}

/** Task ids: `<node id>.<counter>`, unique in the cluster and valid znode names. */
export class TaskIds {
  private next = 0;

  constructor(private readonly nodeId: string) {}

  fresh(): string {
    return `${this.nodeId}.${(this.next++).toString(36)}`;
  }
}
