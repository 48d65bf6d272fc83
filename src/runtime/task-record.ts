import type { BlobRef } from '../data/blob-directory.js';

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
