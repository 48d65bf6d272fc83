/**
 * What `tidepool malleable run` and `tidepool submit --job-kind malleable` are given: the malleable
 * application (a built-in one by name, or a module exporting `defineMalleable(…)`) and the job's
 * input, checked before anything starts; every error names the flag or argument it is about.
 */
import { MALLEABLE_APPS } from '../../frameworks/malleable/applications.js';
import { loadMalleableApp, type AnyMalleableApp } from '../../frameworks/malleable/malleable-app.js';
import { checkRuntimeOptions, type MalleableSpec } from '../../frameworks/malleable/runtime-options.js';
import type { TaskRef } from '../../runtime/worker/task.js';
import { UsageError } from '../errors.js';
import { moduleRef } from '../module-specifier.js';

export interface GivenApplication {
  /** The built-in application's name, when it is one. */
  builtin?: string;
  ref: TaskRef;
  app: AnyMalleableApp;
}

/** A built-in application by name, else a module (loaded here first: a wrong name or export is said at once). */
export async function malleableApplication(name: string, label: string): Promise<GivenApplication> {
  const builtin = Object.hasOwn(MALLEABLE_APPS, name) ? MALLEABLE_APPS[name] : undefined;
  const ref = builtin ?? moduleRef(name, label, { packagesFromCwd: true });
  try {
    return { ...(builtin ? { builtin: name } : {}), ref, app: await loadMalleableApp(ref) };
  } catch (err) {
    throw new UsageError(`${label}: "${name}" is not one of ${Object.keys(MALLEABLE_APPS).join(', ')}, and not a module with a malleable application: ${(err as Error).message}`);
  }
}

/** Checks the application's parameters; `flag` names where they came from. */
export function checkParams(given: GivenApplication, params: unknown, flag: string): void {
  const wrong = given.app.validate?.(params);
  if (wrong) throw new UsageError(`${flag}: ${given.app.name}: ${wrong}`);
}

/** What `submit --input` gives a malleable job besides its application: `{ "params": …, "runtime": { … } }`. */
export type MalleableInput = Omit<MalleableSpec, 'app'>;

/** A malleable job's input as `submit --input` gives it, checked. */
export function malleableInput(given: GivenApplication, input: unknown, flag: string): MalleableInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || !('params' in input)) {
    throw new UsageError(`${flag}: a malleable job's input is {"params": {…the application's parameters…}, "runtime": {…optional runtime options…}}, got ${JSON.stringify(input)}`);
  }
  const extra = Object.keys(input).find((k) => k !== 'params' && k !== 'runtime');
  if (extra !== undefined) throw new UsageError(`${flag}: a malleable job's input has "params" and "runtime", not "${extra}"`);
  const { params, runtime } = input as MalleableInput;
  if (runtime !== undefined && (typeof runtime !== 'object' || runtime === null || Array.isArray(runtime))) throw new UsageError(`${flag}: "runtime" must be an object`);
  const wrong = checkRuntimeOptions(runtime);
  if (wrong) throw new UsageError(`${flag}: ${wrong}`);
  checkParams(given, params, `${flag} params`);
  return { params, ...(runtime ? { runtime } : {}) };
}
