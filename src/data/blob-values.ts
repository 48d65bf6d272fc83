/**
 * Values too large for the coordination service travel as blob references: a ledger record keeps a
 * small task state inline and a large one as `{ ref }`; a large result contribution in a transaction
 * marker becomes `{ "tidepool.blob": ref }`. Small values stay inline, so small tasks pay nothing.
 */
import { isBlobHash } from './content-hash.js';
import type { BlobRef } from './blob-directory.js';

/** Encoded values up to this size stay inline in ledger records and markers (16 KiB). */
export const INLINE_STATE_BYTES = 16 * 1024;

/** A job input up to this size (encoded) stays inline in the job spec (64 KiB). */
export const INLINE_INPUT_BYTES = 64 * 1024;

const MARK = 'tidepool.blob';

export function isBlobRef(v: unknown): v is BlobRef {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return isBlobHash(r.hash) && Number.isSafeInteger(r.size) && (r.size as number) >= 0;
}

/** A result contribution stored as a blob, as it rides in a transaction marker. */
export function blobValue(ref: BlobRef): unknown {
  return { [MARK]: { hash: ref.hash, size: ref.size } };
}

/** The reference of a contribution stored as a blob, or undefined for an inline one. */
export function blobValueRef(v: unknown): BlobRef | undefined {
  if (typeof v !== 'object' || v === null || !(MARK in v)) return undefined;
  const ref = (v as Record<string, unknown>)[MARK];
  return isBlobRef(ref) ? ref : undefined;
}
