import type { TaskSnapshot } from './task-record.js';

/** Node-to-node messages of the runtime protocols (carried by a Transport). */
export type RuntimeMessage =
  /** A thief asks a victim for work. */
  | { type: 'steal'; job: string; requestId: number }
  /** The victim has nothing to give. */
  | { type: 'steal-empty'; job: string; requestId: number }
  /** A task handed over: the answer to a steal (with requestId) or a migration (without). */
  | { type: 'offer'; job: string; requestId?: number; task: TaskSnapshot }
  /** The receiver claimed the offered task in the ledger (or could not). */
  | { type: 'offer-ack'; job: string; taskId: string; claimed: boolean };
