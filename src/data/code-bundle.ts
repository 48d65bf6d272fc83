/**
 * Code shipping, the submitting side: a task module that is a local file is bundled with what it
 * imports (esbuild) into one ES module, so that nodes which have only `tidepool-runtime` installed can run it.
 * `tidepool-runtime` itself and Node's built-ins stay imports (every node has them); native addons cannot be
 * bundled and are refused, naming the package.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';
import { requireOptional } from '../util/optional-package.js';
import { PACKAGE_NAME } from '../util/package-info.js';

/** Packages a node provides itself: never bundled. */
export const SHIPPED_EXTERNALS = [PACKAGE_NAME, `${PACKAGE_NAME}/*`];

export interface CodeBundle {
  /** The bundled ES module. */
  code: Buffer;
  /** The file that was bundled. */
  entry: string;
}

/** Whether a task module reference is a local file, i.e. something to ship. */
export function isLocalModule(module: string): boolean {
  return module.startsWith('file:');
}

/** Bundles the task module at `fileUrl` (a file: URL) with its imports into one ES module. */
export async function bundleTaskModule(fileUrl: string): Promise<CodeBundle> {
  const entry = fileURLToPath(fileUrl);
  if (!existsSync(entry)) throw new Error(`cannot ship task module ${fileUrl}: no such file`);
  const { build } = requireOptional<typeof Esbuild>('esbuild', 'code shipping (a task module that is a local file, submitted to a cluster elsewhere)');
  try {
    const result = await build({
      entryPoints: [entry], bundle: true, format: 'esm', platform: 'node', target: 'node20', write: false,
      external: SHIPPED_EXTERNALS, logLevel: 'silent', plugins: [refuseNativeAddons(fileUrl)],
      // CommonJS dependencies call require(): give the ES module one.
      banner: { js: "import { createRequire as __tidepoolRequire } from 'node:module'; const require = __tidepoolRequire(import.meta.url);" },
    });
    const out = result.outputFiles[0];
    if (!out) throw new Error('esbuild produced no output');
    return { code: Buffer.from(out.contents), entry };
  } catch (err) {
    const errors = (err as { errors?: Array<{ text: string }> }).errors;
    if (errors?.length) throw new Error(`cannot ship task module ${fileUrl}: ${errors.map((e) => e.text).join('; ')}`);
    throw err;
  }
}

/** The package directory (the one holding package.json) a file under node_modules belongs to. */
function packageOf(file: string): { root: string; name: string } | undefined {
  const parts = file.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const scoped = parts[at + 1]!.startsWith('@');
  const nameParts = parts.slice(at + 1, at + (scoped ? 3 : 2));
  return { root: parts.slice(0, at + 1).concat(nameParts).join(path.sep), name: nameParts.join('/') };
}

const NATIVE_DEPENDENCIES = ['bindings', 'node-gyp-build', 'node-addon-api', 'prebuild-install', 'nan'];

/** Why a package is a native addon, or undefined. */
function nativeReason(root: string): string | undefined {
  if (existsSync(path.join(root, 'binding.gyp'))) return 'it has a binding.gyp';
  try {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { gypfile?: boolean; dependencies?: Record<string, string> };
    if (pkg.gypfile) return 'its package.json sets gypfile';
    const dep = NATIVE_DEPENDENCIES.find((d) => pkg.dependencies?.[d] !== undefined);
    if (dep) return `it depends on ${dep}`;
  } catch {
    // no readable package.json: nothing says it is native
  }
  return undefined;
}

function refuseNativeAddons(module: string): Esbuild.Plugin {
  const checked = new Map<string, string | undefined>();
  const refusal = (name: string, why: string) =>
    `it imports "${name}", a native addon (${why}); native addons cannot be shipped: install "${name}" on every node and submit a module installed there (not a file: URL)`;
  return {
    name: 'tidepool-refuse-native-addons',
    setup(b) {
      b.onResolve({ filter: /\.node$/ }, (args) => {
        const pkg = packageOf(path.resolve(args.resolveDir, args.path));
        return { errors: [{ text: refusal(pkg?.name ?? args.path, `it loads ${args.path}`) }] };
      });
      b.onLoad({ filter: /[\\/]node_modules[\\/]/ }, (args) => {
        const pkg = packageOf(args.path);
        if (!pkg) return undefined;
        if (!checked.has(pkg.root)) checked.set(pkg.root, nativeReason(pkg.root));
        const why = checked.get(pkg.root);
        return why ? { errors: [{ text: refusal(pkg.name, why) }] } : undefined;
      });
      void module;
    },
  };
}
