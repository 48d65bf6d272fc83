/**
 * The sandbox runtime as one script (an IIFE bundled by esbuild from `sandbox-entry`), built once
 * per process: it is evaluated inside every isolate or vm context, which have no module loader.
 */
import { fileURLToPath } from 'node:url';
import { esbuild } from './service-dependencies.js';

let bundle: string | undefined;

/** Takes the bundle made elsewhere (a worker thread is handed its process's bundle instead of running esbuild). */
export function useRuntimeBundle(code: string): void {
  bundle = code;
}

export function runtimeBundle(): string {
  if (bundle) return bundle;
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const entry = fileURLToPath(new URL(`./sandbox-entry${ext}`, import.meta.url));
  const out = esbuild().buildSync({ entryPoints: [entry], bundle: true, format: 'iife', platform: 'neutral', target: 'es2022', write: false, logLevel: 'silent' });
  bundle = out.outputFiles[0]!.text;
  return bundle;
}
