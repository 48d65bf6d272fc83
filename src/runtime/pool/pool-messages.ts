import { isBlobRef } from '../../data/blob-values.js';
import { validateHold } from '../job/durable-blobs.js';
import type { TaskSnapshot } from './task-snapshot.js';

/** Node-to-node messages of the task pool's protocols (the body of a job envelope). */
export type RuntimeMessage =
  /** A thief asks a victim for work. */
  | { type: 'steal'; job: string; requestId: number }
  /** The victim has nothing to give. */
  | { type: 'steal-empty'; job: string; requestId: number }
  /** A task handed over: the answer to a steal (with requestId), a migration or a placement (without). */
  | { type: 'offer'; job: string; requestId?: number; task: TaskSnapshot }
  /** The receiver claimed the offered task in the ledger (or could not). */
  | { type: 'offer-ack'; job: string; taskId: string; claimed: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Checks a task-pool message's shape (a frame from a peer is never trusted to match its type). */
export function validateRuntimeMessage(m: { type: string; [key: string]: unknown }): string | undefined {
  if (!isId(m.job)) return 'field "job" must be a job id';
  switch (m.type) {
    case 'steal':
    case 'steal-empty':
      return isCount(m.requestId) ? undefined : 'field "requestId" must be a whole number';
    case 'offer': {
      if (m.requestId !== undefined && !isCount(m.requestId)) return 'field "requestId" must be a whole number';
      const t = m.task;
      if (!isObject(t) || !isId(t.id) || !isCount(t.version) || !('state' in t)) return 'field "task" must be {id, state, partial, version}';
      return undefined;
    }
    case 'offer-ack':
      if (!isId(m.taskId)) return 'field "taskId" must be a task id';
      return typeof m.claimed === 'boolean' ? undefined : 'field "claimed" must be a boolean';
    default:
      return `unknown task-pool message type ${JSON.stringify(m.type)}`;
  }
}

/** Checks anything a task-pool member receives: its own messages (an offer's blob reference too) and `hold` requests. */
export function validateTaskPoolMessage(body: { type: string; [key: string]: unknown }): string | undefined {
  if (body.type === 'hold') return validateHold(body);
  const wrong = validateRuntimeMessage(body);
  if (wrong || body.type !== 'offer') return wrong;
  const ref = (body.task as { ref?: unknown }).ref;
  return ref === undefined || isBlobRef(ref) ? undefined : 'field "task.ref" must be a blob reference {hash, size}';
}
