/**
 * Bundles the modules of a package that tasks use into one script for the sandbox (esbuild): its
 * value is `{ f0: namespace of files[0], … }`, with everything those modules import inlined. The
 * sandbox has no module loader and no I/O, so a package that imports Node.js modules (`fs`, `net`…)
 * cannot be bundled: the error names the package and what it imports. Bundles are cached by
 * package directory and file list.
 */
import path from 'node:path';
import { esbuild } from './service-dependencies.js';

/** The variable the bundle's IIFE assigns; the script wraps it so that its value is the namespaces. */
const GLOBAL_NAME = '__tp_package';
const cache = new Map<string, Promise<string>>();

export class PackageBundleError extends Error {
  constructor(readonly packageName: string, reason: string) {
    super(`package ${packageName} cannot run in a sandbox: ${reason}`);
    this.name = 'PackageBundleError';
  }
}

/** Checks that a module path given for a package stays inside it (`lib/a.js`, never `../x` or `/etc/x`). */
export function packageFile(root: string, file: string): string {
  const full = path.resolve(root, file);
  if (path.isAbsolute(file) || file.split(/[\\/]/).includes('..') || !full.startsWith(root + path.sep)) throw new Error(`module path ${JSON.stringify(file)} is not inside the package`);
  return full;
}

/** The bundle of `files` (paths relative to the package directory `root`) of package `name`, as a script expression. */
export function bundlePackage(root: string, name: string, files: string[]): Promise<string> {
  const key = `${root}\u0000${files.join('\u0000')}`;
  let bundle = cache.get(key);
  if (!bundle) {
    bundle = bundleOnce(root, name, files);
    cache.set(key, bundle);
    bundle.catch(() => cache.delete(key));
  }
  return bundle;
}

async function bundleOnce(root: string, name: string, files: string[]): Promise<string> {
  const contents = files.map((f, i) => {
    packageFile(root, f);
    return `export * as f${i} from ${JSON.stringify(`./${f.split(path.sep).join('/')}`)};`;
  }).join('\n');
  try {
    const out = await esbuild().build({
      stdin: { contents, resolveDir: root, sourcefile: `tidepool-package:${name}`, loader: 'js' },
      bundle: true, format: 'iife', globalName: GLOBAL_NAME, platform: 'neutral', mainFields: ['module', 'main'],
      target: 'es2022', write: false, logLevel: 'silent', define: { 'process.env.NODE_ENV': '"production"' },
    });
    const text = out.outputFiles[0]?.text;
    if (text === undefined) throw new Error('esbuild produced no output');
    return `(function () {\n${text}\nreturn ${GLOBAL_NAME};\n})()`;
  } catch (err) {
    const errors = (err as { errors?: { text: string; notes?: { text: string }[] }[] }).errors;
    if (!errors?.length) throw err;
    const node = errors.some((e) => /Could not resolve "node:/.test(e.text) || e.notes?.some((n) => /built into node/.test(n.text)));
    throw new PackageBundleError(name, `${errors.map((e) => e.text).join('; ')}${node ? ' (it uses Node.js modules: I/O and host access cannot run remotely)' : ''}`);
  }
}
