import { createHash } from 'node:crypto';
import { DataError } from './data-error.js';

/** A blob's address: the SHA-256 of its content, 64 lowercase hex digits. */
export type BlobHash = string;

const HASH = /^[0-9a-f]{64}$/;

export function hashOf(bytes: Uint8Array): BlobHash {
  return createHash('sha256').update(bytes).digest('hex');
}

export function isBlobHash(value: unknown): value is BlobHash {
  return typeof value === 'string' && HASH.test(value);
}

/** Throws BAD_INPUT naming `where` unless `value` is a blob hash. */
export function checkBlobHash(value: unknown, where: string): BlobHash {
  if (!isBlobHash(value)) throw new DataError('BAD_INPUT', `${where}: ${JSON.stringify(value)} is not a blob hash (64 lowercase hex digits of SHA-256)`);
  return value;
}

/** A short form for messages and logs. */
export function shortHash(hash: BlobHash): string {
  return hash.slice(0, 12);
}
