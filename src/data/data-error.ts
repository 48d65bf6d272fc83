/** What went wrong with a blob, so callers can tell a limit from corruption from a missing holder. */
export type DataErrorCode =
  /** The object is larger than the per-object maximum. */
  | 'TOO_LARGE'
  /** Storing the object would exceed the node's store budget. */
  | 'OVER_BUDGET'
  /** Bytes do not match their hash (on arrival or read back from disk). */
  | 'CORRUPT'
  /** No such blob in this store. */
  | 'NOT_FOUND'
  /** A holder refused to send it (the asking peer has no business with it). */
  | 'REFUSED'
  /** No holder could deliver it. */
  | 'UNAVAILABLE'
  /** A malformed hash, size or message. */
  | 'BAD_INPUT'
  /** The store or service was closed. */
  | 'CLOSED';

/** A failed data-plane operation; `hash` names the blob when there is one. */
export class DataError extends Error {
  constructor(readonly code: DataErrorCode, message: string, readonly hash?: string) {
    super(message);
    this.name = 'DataError';
  }
}
