/**
 * What is known of a file in the shared directory without reading it again: its size and
 * modification time (nanoseconds), and the SHA-256 of its content when it was hashed. A rerun
 * compares stamps: by size and mtime (`mtime`, as make and Snakemake do by default) or by content
 * (`content`: a file whose size or mtime changed is hashed and compared; a touched but unchanged
 * file is then still the same).
 */
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';

export type ChangeDetection = 'mtime' | 'content';

export interface FileStamp {
  size: number;
  /** Modification time in nanoseconds, as a decimal string (beyond a double's precision). */
  mtimeNs: string;
  /** Hex SHA-256 of the content, when known. */
  sha256?: string;
}

/** The stamp of a file as it is now (size and mtime only), or undefined if there is none. */
export function statStamp(path: string): FileStamp | undefined {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (!st?.isFile()) return undefined;
  return { size: Number(st.size), mtimeNs: st.mtimeNs.toString() };
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Same size and mtime: the file was not written since the stamp was taken. */
export function sameWrite(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/**
 * Is the file now (`now`, hashed only if asked) what `recorded` describes? By mtime: the same write.
 * By content: the same write, or (rewritten since) the same bytes.
 */
export async function unchanged(path: string, recorded: FileStamp, now: FileStamp, detection: ChangeDetection): Promise<boolean> {
  if (sameWrite(recorded, now)) return true;
  if (detection === 'mtime' || recorded.sha256 === undefined || recorded.size !== now.size) return false;
  return (await sha256OfFile(path)) === recorded.sha256;
}

/** As `unchanged`, against several recorded stamps: the same write as one of them, or (by content) the same bytes as one. */
export async function unchangedFromAny(path: string, recorded: FileStamp[], now: FileStamp, detection: ChangeDetection): Promise<boolean> {
  if (recorded.some((r) => sameWrite(r, now))) return true;
  if (detection === 'mtime') return false;
  const same = recorded.filter((r) => r.sha256 !== undefined && r.size === now.size);
  if (same.length === 0) return false;
  const sha = await sha256OfFile(path);
  return same.some((r) => r.sha256 === sha);
}

/** `size mtimeNs sha256|-`: a stamp in a journal line. */
export function formatStamp(s: FileStamp): string {
  return `${s.size} ${s.mtimeNs} ${s.sha256 ?? '-'}`;
}

export function parseStamp(size: string | undefined, mtimeNs: string | undefined, sha: string | undefined): FileStamp | undefined {
  if (size === undefined || mtimeNs === undefined || !/^\d+$/.test(size) || !/^\d+$/.test(mtimeNs)) return undefined;
  return { size: Number(size), mtimeNs, ...(sha !== undefined && sha !== '-' ? { sha256: sha } : {}) };
}
