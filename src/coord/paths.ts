import { CoordError } from './errors.js';

/** Throws BAD_ARGUMENTS unless `path` is an absolute znode path ("/", "/a", "/a/b"). */
export function validatePath(path: string): void {
  const bad = (why: string) => new CoordError('BAD_ARGUMENTS', path, undefined, why);
  if (typeof path !== 'string' || !path.startsWith('/')) throw bad('path must start with /');
  if (path === '/') return;
  if (path.endsWith('/')) throw bad('path must not end with /');
  if (path.includes('\u0000')) throw bad('path must not contain NUL');
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') throw bad('empty path segment');
    if (segment === '.' || segment === '..') throw bad('relative path segment');
  }
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Joins path segments; each segment may itself contain slashes. */
export function joinPath(base: string, ...segments: string[]): string {
  let out = base === '/' ? '' : base;
  for (const s of segments) out += s.startsWith('/') ? s : `/${s}`;
  return out === '' ? '/' : out;
}

/** ZooKeeper's sequential suffix: the parent's cversion, zero-padded to ten digits. */
export function sequenceSuffix(n: number): string {
  return n.toString().padStart(10, '0');
}

/** The sequence number at the end of a sequential znode name, or NaN. */
export function sequenceOf(name: string): number {
  return Number(name.slice(-10));
}
