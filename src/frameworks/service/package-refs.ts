/**
 * The client's side of packages (seed 002 §3.2): which installed package a captured function comes
 * from (its script is a file under a node_modules directory), and the export path under which its
 * module offers it, so that it can travel as a reference (package, module, export) instead of as
 * source.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface InstalledPackage {
  name: string;
  version: string;
  /** The package's directory (holding its package.json). */
  root: string;
}

const byDirectory = new Map<string, InstalledPackage | undefined>();

/** The installed package a file belongs to: the nearest package.json with a name and version, inside node_modules. */
export function installedPackageOf(file: string): InstalledPackage | undefined {
  const start = path.dirname(file);
  if (byDirectory.has(start)) return byDirectory.get(start);
  const parts = start.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  let found: InstalledPackage | undefined;
  if (at >= 0) {
    // From the file's directory up to node_modules/<name> (a package may hold nested package.json files without a name).
    for (let depth = parts.length; depth > at + 1 && !found; depth--) {
      const dir = parts.slice(0, depth).join(path.sep);
      const manifest = path.join(dir, 'package.json');
      if (!existsSync(manifest)) continue;
      try {
        const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
        if (typeof name === 'string' && typeof version === 'string') found = { name, version, root: dir };
      } catch {
        // an unreadable manifest names no package: look further up
      }
    }
  }
  byDirectory.set(start, found);
  return found;
}

/**
 * The path under which the module `file` exports `value`: a named export (`['mean']`), the default
 * export (`['default']`) or a property of it (`['default', 'mean']`, CommonJS). The module is loaded
 * already (the value came from it), so importing it again returns the same instance. No getter runs.
 */
export async function exportPath(file: string, value: unknown): Promise<string[] | undefined> {
  let ns: Record<string, unknown>;
  try {
    ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const names = Object.keys(ns);
  for (const key of names) if (key !== 'default' && ns[key] === value) return [key];
  const d = ns.default;
  if (d === value && d !== undefined) return ['default'];
  if ((typeof d === 'object' && d !== null) || typeof d === 'function') {
    for (const key of Object.keys(d)) {
      const desc = Object.getOwnPropertyDescriptor(d, key);
      if (desc && 'value' in desc && desc.value === value) return ['default', key];
    }
  }
  return undefined;
}
