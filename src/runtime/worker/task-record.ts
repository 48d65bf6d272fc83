/**
 * A task's record in its job's ledger, and its encoding: a spawned child's first record is encoded on
 * the worker that spawned it (worker/task-runner.ts), so that the node's thread neither encodes nor
 * copies its state; the ledger writes these bytes as they are.
 */
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
