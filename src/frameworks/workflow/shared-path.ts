import { join } from 'node:path';

/** A file name as a path in the shared directory (names may contain slashes: they are escaped, not followed). */
export function sharedPath(shared: string, name: string): string {
  return join(shared, name.replace(/%/g, '%25').replace(/\//g, '%2F'));
}
