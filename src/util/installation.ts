/** Whether a file is part of this installation of tidepool (the package directory package-info.ts finds). */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from './package-info.js';

/** Whether a file: URL names a file inside this installation (links resolved). */
export function isInstalledFile(fileUrl: string): boolean {
  let file: string;
  try {
    file = fileURLToPath(fileUrl);
  } catch {
    return false;
  }
  return isInside(realPath(file), realPath(packageRoot()));
}
/** Whether `file` is `dir` or below it (both absolute, links resolved by the caller). */
export function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The path with links resolved (as import() loads it), or made absolute as given when it does not exist. */
export function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
