import { CoordError, type CoordErrorCode } from '../errors.js';

/** node-zookeeper-client's numeric exception codes mapped to ours. */
const CODES: Record<number, CoordErrorCode> = {
  [-1]: 'SYSTEM_ERROR',
  [-4]: 'CONNECTION_LOSS',
  [-7]: 'OPERATION_TIMEOUT',
  [-8]: 'BAD_ARGUMENTS',
  [-101]: 'NO_NODE',
  [-102]: 'NO_AUTH',
  [-103]: 'BAD_VERSION',
  [-108]: 'NO_CHILDREN_FOR_EPHEMERALS',
  [-110]: 'NODE_EXISTS',
  [-111]: 'NOT_EMPTY',
  [-112]: 'SESSION_EXPIRED',
  [-114]: 'INVALID_ACL',
};

export const OK = 0;
export const RUNTIME_INCONSISTENCY = -2;

export function codeOf(numeric: number): CoordErrorCode {
  return CODES[numeric] ?? 'SYSTEM_ERROR';
}

/** Converts whatever the client library threw into a CoordError naming the path. */
export function toCoordError(err: unknown, path?: string, opIndex?: number): CoordError {
  if (err instanceof CoordError) return err;
  const numeric = (err as { code?: unknown } | null)?.code;
  if (typeof numeric === 'number') return new CoordError(codeOf(numeric), path, opIndex);
  // The library asserts on bad arguments (e.g. an invalid path) by throwing AssertionError.
  const message = err instanceof Error ? err.message : String(err);
  return new CoordError('BAD_ARGUMENTS', path, opIndex, message);
}
