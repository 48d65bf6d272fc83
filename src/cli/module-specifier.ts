/**
 * The modules a command names on its command line (`tidepool submit MODULE`, `tidepool iterate
 * MODULE`, `--job-kind MODULE#EXPORT`): a path is the caller's file, anything else a package.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './errors.js';

/**
 * A module given on the command line: a path (`./count.js`, `../x.ts`, `/abs.js`, or any name of an
 * existing file) is resolved against the caller's current directory and must exist; anything else is
 * a package specifier (`my-tasks`, `@org/tasks/count`), resolved by the nodes — or, with
 * `packagesFromCwd`, first from the caller's directory as its own code would require it (its
 * node_modules), falling back to the nodes' resolution when that finds nothing (an ESM-only package
 * that exports no `require` or `default` entry, say).
 */
export function moduleSpecifier(module: string, label: string, opts: { packagesFromCwd?: boolean } = {}): string {
  const looksLikePath = /^\.{1,2}([/\\]|$)|^[/\\]/.test(module) || /\.(c|m)?[jt]s$/.test(module);
  const file = resolve(process.cwd(), module);
  if (existsSync(file)) return pathToFileURL(file).href;
  if (looksLikePath) throw new UsageError(`${label}: no such file: ${file} (a module path is relative to the current directory)`);
  if (opts.packagesFromCwd) {
    try {
      return pathToFileURL(createRequire(join(process.cwd(), 'noop.js')).resolve(module)).href;
    } catch {
      // Not found from here: the nodes resolve it as tidepool's own code would.
    }
  }
  return module;
}

/** `MODULE` or `MODULE#EXPORT` (export `default` when none is named). */
export function moduleRef(value: string, label: string, opts: { packagesFromCwd?: boolean } = {}): { module: string; export: string } {
  const [module, exp, ...rest] = value.split('#');
  if (!module || exp === '' || rest.length > 0) throw new UsageError(`${label}: "${value}" is not MODULE or MODULE#EXPORT`);
  return { module: moduleSpecifier(module, label, opts), export: exp ?? 'default' };
}
