/**
 * A task as the pool moves it: a snapshot of its record with the ledger version its sender last saw
 * (an offer, a steal, a recovery), made lazily from the bytes its worker encoded for a new task; and
 * the ids the pool gives new tasks.
 */
import type { BlobRef } from '../../data/blob-directory.js';
import { recordState, type EncodedRecords } from '../worker/task-record.js';

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

/** The last incarnation tag handed out in this process (see TaskIds). */
let lastIncarnation = 0;

/**
 * Task ids: `<node id>.<incarnation>.<counter>`, unique in the cluster and valid znode names. The
 * incarnation tells apart the node's participations in one job: a node that leaves a job and joins it
 * again (a drain undone, a shrink then an expand, a process restarted under the same `--id`) starts a new
 * counter, and without it would hand out the ids of its earlier tasks again (the ledger refuses such a
 * create, and a task record could be taken for another's). It is the time of the participation's start
 * in milliseconds (base 36), made strictly increasing within the process.
 */
export class TaskIds {
  private next = 0;
  private readonly prefix: string;

  constructor(nodeId: string, now: number = Date.now()) {
    lastIncarnation = Math.max(now, lastIncarnation + 1);
    this.prefix = `${nodeId}.${lastIncarnation.toString(36)}.`;
  }

  fresh(): string {
    return `${this.prefix}${(this.next++).toString(36)}`;
  }
}
