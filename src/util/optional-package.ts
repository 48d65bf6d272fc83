/**
 * Packages that only one part of tidepool needs (the dashboard's web server and charts, the service's
 * sandbox, the bundler, the workflow readers) are optional peer dependencies: an application that does
 * not use that part does not install them. Those parts load them here, on first use, and a missing one
 * is refused with the part that needs it and the command that installs it.
 */
import { createRequire } from 'node:module';
import { PACKAGE_NAME, packageJson } from './package-info.js';

/** Resolves from tidepool's own files, as its static imports would: the application's node_modules. */
const requireHere = createRequire(import.meta.url);

/** A part of tidepool was used without a package it needs. */
export class MissingPackageError extends Error {
  readonly code = 'TIDEPOOL_MISSING_PACKAGE';
  constructor(
    /** The package to install. */
    readonly packageName: string,
    /** The part of tidepool that needs it, e.g. "the dashboard". */
    readonly part: string,
    /** The command that installs a version tidepool supports. */
    readonly install: string,
  ) {
    super(`${PACKAGE_NAME}: ${part} needs the package ${packageName}, which is not installed: ${install}`);
    this.name = 'MissingPackageError';
  }
}

/**
 * The version to install on this Node major where the supported range alone would pick a wrong one:
 * each isolated-vm line builds against only some Node versions (5 for 18-22, 6 for 22-24, 7 for 24-26).
 */
const PER_NODE_MAJOR: Record<string, (major: number) => string | undefined> = {
  'isolated-vm': (major) => (major <= 20 ? '5' : major <= 24 ? '6' : undefined),
};

/** `name@range` for a version tidepool supports on this Node (a bare name outside the package). */
export function packageSpec(name: string, nodeVersion = process.versions.node): string {
  const pinned = PER_NODE_MAJOR[name]?.(Number(nodeVersion.split('.')[0]));
  let range: string | undefined;
  try {
    range = packageJson().peerDependencies?.[name];
  } catch {
    range = undefined; // running outside the package: name the package alone
  }
  const spec = pinned ?? (range !== undefined && !range.includes(' ') ? range : undefined);
  return spec !== undefined ? `${name}@${spec}` : name;
}

/** The npm command that installs `names` in versions tidepool supports on this Node. */
export function installCommand(...names: string[]): string {
  return `npm install ${names.map((n) => packageSpec(n)).join(' ')}`;
}

function isMissing(err: unknown, name: string): boolean {
  const e = err as { code?: string; message?: string };
  return (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && typeof e.message === 'string'
    && (e.message.includes(`'${name}'`) || e.message.includes(`'${name}/`) || e.message.includes(`"${name}"`));
}

/**
 * Loads optional package `name` for `part` (e.g. "the dashboard"); a package that is not installed is
 * refused with a MissingPackageError naming it, the part, and the install command. Any other failure
 * (the package is there but broken) is passed on unchanged. Synchronous (every optional package has a
 * CommonJS entry), so that the parts which need one can load it where they use it.
 */
export function requireOptional<M>(name: string, part: string): M {
  try {
    return requireHere(name) as M;
  } catch (err) {
    if (isMissing(err, name)) throw new MissingPackageError(name, part, installCommand(name));
    throw err;
  }
}

/**
 * Where optional package `name` is installed (its main file, or `file` inside it), without loading it:
 * for packages that are loaded elsewhere (a child process, a browser page).
 */
export function resolveOptional(name: string, part: string, file?: string): string {
  try {
    return requireHere.resolve(file !== undefined ? `${name}/${file}` : name);
  } catch (err) {
    if (isMissing(err, name)) throw new MissingPackageError(name, part, installCommand(name));
    throw err;
  }
}
