/** Error codes of the coordination layer, named after ZooKeeper's so that both backends speak one language. */
export type CoordErrorCode =
  | 'NODE_EXISTS'
  | 'NO_NODE'
  | 'BAD_VERSION'
  | 'NOT_EMPTY'
  | 'NO_CHILDREN_FOR_EPHEMERALS'
  /** The znode's access list does not grant this session the operation (access.ts). */
  | 'NO_AUTH'
  | 'INVALID_ACL'
  | 'CONNECTION_LOSS'
  | 'SESSION_EXPIRED'
  | 'OPERATION_TIMEOUT'
  | 'BAD_ARGUMENTS'
  | 'CLOSED'
  | 'SYSTEM_ERROR';

/**
 * Marks a CoordError across copies of this module: a job kind or task module loaded from another
 * install of tidepool (a client's, say) sees the node's client throw errors of the node's class.
 */
const BRAND = Symbol.for('tidepool.CoordError');

/**
 * A failed coordination operation. `path` names the znode involved; for a failed
 * transaction `opIndex` is the index of the operation that caused the failure.
 */
export class CoordError extends Error {
  readonly [BRAND] = true;
  readonly code: CoordErrorCode;
  readonly path: string | undefined;
  readonly opIndex: number | undefined;
  /** What more the message says after the code and path. */
  readonly detail: string | undefined;

  constructor(code: CoordErrorCode, path?: string, opIndex?: number, detail?: string) {
    const where = path === undefined ? '' : ` at ${path}`;
    const op = opIndex === undefined ? '' : ` (transaction op ${opIndex})`;
    super(`${code}${where}${op}${detail ? `: ${detail}` : ''}`);
    this.name = 'CoordError';
    this.code = code;
    this.path = path;
    this.opIndex = opIndex;
    this.detail = detail;
  }
}

/** True when `err` is a CoordError with one of the given codes. */
export function isCoordError(err: unknown, ...codes: CoordErrorCode[]): err is CoordError {
  const coord = err instanceof CoordError || (typeof err === 'object' && err !== null && (err as { [BRAND]?: unknown })[BRAND] === true);
  return coord && (codes.length === 0 || codes.includes((err as CoordError).code));
}

/**
 * Connection loss leaves the outcome of a write unknown; session expiry and closing are final.
 * Recipes retry the former (idempotently) and give up on the latter.
 */
export function isRetryable(err: unknown): boolean {
  return isCoordError(err, 'CONNECTION_LOSS', 'OPERATION_TIMEOUT');
}
