import { CoordError } from './errors.js';

/** An absolute path of non-empty segments without NUL; checked once per operation, so kept to one regex. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what a znode name must not contain
const WELL_FORMED = /^(?:\/[^/\u0000]+)+$/;
const RELATIVE_SEGMENT = /\/\.\.?(?:\/|$)/;

/** Throws BAD_ARGUMENTS unless `path` is an absolute znode path ("/", "/a", "/a/b"). */
export function validatePath(path: string): void {
  if (path === '/' || (typeof path === 'string' && WELL_FORMED.test(path) && !RELATIVE_SEGMENT.test(path))) return;
  throw new CoordError('BAD_ARGUMENTS', path, undefined, whatIsWrong(path));
}

function whatIsWrong(path: string): string {
  if (typeof path !== 'string' || !path.startsWith('/')) return 'path must start with /';
  if (path.endsWith('/')) return 'path must not end with /';
  if (path.includes('\u0000')) return 'path must not contain NUL';
  return path.slice(1).split('/').includes('') ? 'empty path segment' : 'relative path segment';
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
