/**
 * Code shipping, the node's side: a shipped bundle is written once to a cache directory named by its
 * content hash and imported from there (by the node and its workers alike). The directory links
 * `node_modules/tidepool-runtime` to this node's own tidepool, so the bundle's
 * `import … from 'tidepool-runtime'` resolves to the runtime that runs it.
 */
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_NAME, packageRoot } from '../util/package-info.js';
import { hashOf, type BlobHash } from './content-hash.js';
import { DataError } from './data-error.js';

const BUNDLE = 'task.mjs';

/** Where shipped code is cached: $TIDEPOOL_CODE_CACHE, else a directory under the OS temp dir. */
export function defaultCodeCache(): string {
  return process.env.TIDEPOOL_CODE_CACHE ?? path.join(os.tmpdir(), `tidepool-code-${os.userInfo().uid}`);
}

/**
 * Writes bundle `bytes` (whose SHA-256 must be `hash`) to the cache unless it is there already, and
 * returns the file: URL to import. Concurrent writers (several nodes on one machine) each write a
 * temporary file and rename it into place, so an importer never sees half a bundle.
 */
export async function materializeBundle(hash: BlobHash, bytes: Uint8Array, cacheDir = defaultCodeCache()): Promise<string> {
  const dir = path.join(cacheDir, hash);
  const file = path.join(dir, BUNDLE);
  await privateDirectory(cacheDir);
  if (existsSync(file) && hashOf(await readFile(file)) === hash) return pathToFileURL(file).href;
  if (hashOf(bytes) !== hash) throw new DataError('CORRUPT', `shipped code ${hash.slice(0, 12)} does not match its hash`, hash);
  await mkdir(path.join(dir, 'node_modules'), { recursive: true, mode: 0o700 });
  const link = path.join(dir, 'node_modules', PACKAGE_NAME);
  if (!existsSync(link)) {
    await symlink(packageRoot(), link, 'dir').catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
  await writeFile(tmp, bytes);
  await rename(tmp, file).catch(async (err: unknown) => {
    await rm(tmp, { force: true });
    throw err;
  });
  return pathToFileURL(file).href;
}

/**
 * Creates the cache directory private to this user, or checks that an existing one is: a directory
 * (not a link) owned by this user that nobody else may write. In a shared temporary directory another
 * local user could otherwise make it first and swap a bundle between its hash check and its import.
 */
async function privateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new DataError('BAD_INPUT', `the code cache ${dir} is not private to this user (${st.isDirectory() ? `owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}` : 'not a directory'}): ` +
      'another local user could replace shipped code in it before it runs; remove it, or set TIDEPOOL_CODE_CACHE to a directory only this user can write');
  }
}
