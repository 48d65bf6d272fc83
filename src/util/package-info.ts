/**
 * Who tidepool is as an installed package: the name programs import it by, and the directory it
 * runs from (the sources in this repository, or `node_modules/tidepool-runtime` in an application).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The name tidepool is published under on the npm registry (package.json `name`): programs import
 * `tidepool-runtime` and its subpaths (`tidepool-runtime/service`, …). The command stays `tidepool`.
 * (`tidepool` alone belongs to an unrelated package on the registry.)
 */
export const PACKAGE_NAME = 'tidepool-runtime';

export interface PackageJson {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
}

let found: { root: string; json: PackageJson } | undefined;

function locate(): { root: string; json: PackageJson } {
  if (found) return found;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    try {
      const json = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
      if (json.name === PACKAGE_NAME) return (found = { root: dir, json });
    } catch {
      // no (readable) package.json here: look further up
    }
    if (path.dirname(dir) === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package this code runs from (no package.json named ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)})`);
  }
}

/** The directory of the tidepool package this code runs from (the one whose package.json is named PACKAGE_NAME). */
export function packageRoot(): string {
  return locate().root;
}

/** That package's package.json. */
export function packageJson(): PackageJson {
  return locate().json;
}
