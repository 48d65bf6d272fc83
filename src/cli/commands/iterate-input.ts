/**
 * What `tidepool iterate` is given to run: the application (a built-in one or a user's module), its
 * parameters (`--input JSON|@FILE`, then `--param KEY=VALUE` over it), several tasks (`--tasks
 * JSON|@FILE`) and the seed. Every error names the flag, and the key or task it is about.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { applicationParams, ITERATIVE_APPLICATIONS, type IterativeApplication } from '../../frameworks/iterative/apps/applications.js';
import { seedValue } from '../../frameworks/iterative/iteration-random.js';
import type { IterativeTask } from '../../frameworks/iterative/iterative-types.js';
import { loadTaskType, type TaskRef } from '../../runtime/worker/task.js';
import { UsageError } from '../errors.js';
import { moduleRef } from '../module-specifier.js';
import type { ValueKind } from '../settings/kinds.js';

const SEED_WHAT = 'a whole number from 0 to 2^64 − 1';

/** `--seed`: 0 … 2^64 − 1, kept whole (a bigint): a larger seed is refused, never cut. */
export const seedKind: ValueKind = {
  schema: { anyOf: [{ type: 'string', pattern: '^\\s*[0-9]+\\s*$' }, { type: 'integer', minimum: 0 }] },
  what: SEED_WHAT,
  decode: (value) => {
    try {
      return seedValue(typeof value === 'string' ? value.trim() : (value as number));
    } catch {
      throw new Error(`${JSON.stringify(String(value).trim())} is not ${SEED_WHAT}${typeof value === 'number' ? ' (above 2^53 − 1, write it as a string)' : ''}`);
    }
  },
};

/**
 * The application `<app>` names: a built-in one by name, else a module (a file from the current
 * directory, or a package), loaded here first so that a wrong name or a module that is no iterative
 * application is said before anything starts.
 */
export async function iterativeApplication(app: string): Promise<{ builtin?: IterativeApplication; ref: TaskRef }> {
  const builtin = Object.hasOwn(ITERATIVE_APPLICATIONS, app) ? ITERATIVE_APPLICATIONS[app] : undefined;
  if (builtin) return { builtin, ref: builtin.ref };
  const ref = moduleRef(app, 'APP', { packagesFromCwd: true });
  let type: object;
  try {
    type = await loadTaskType(ref);
  } catch (err) {
    throw new UsageError(`APP: "${app}" is not one of ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}, and not a module that loads: ${(err as Error).message}`);
  }
  if (!('iterative' in type)) throw new UsageError(`APP: ${app} exports a task type "${ref.export}" that is not an iterative application (make it with defineIterative)`);
  return { ref };
}

/** JSON given inline or, as `@FILE`, in a file (relative to the current directory). */
export function jsonArgument(text: string, flag: string): unknown {
  let source = text;
  let where = flag;
  if (text.startsWith('@')) {
    const file = resolve(process.cwd(), text.slice(1));
    where = `${flag} ${file}`;
    try {
      source = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (err) {
    throw new UsageError(`${where}: not JSON (${(err as Error).message})`);
  }
}

/**
 * `KEY=VALUE` pairs as an object: VALUE is JSON when it parses as JSON (numbers, true, false, null,
 * quoted strings, arrays, objects), else the text itself; `a.b=1` sets b inside a.
 */
export function paramPairs(pairs: readonly string[], flag = '--param'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const key = at < 0 ? '' : pair.slice(0, at).trim();
    if (key === '' || key.split('.').some((k) => k === '')) throw new UsageError(`${flag}: "${pair}" is not KEY=VALUE`);
    const text = pair.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // Not JSON: the text itself.
    }
    const path = key.split('.');
    let into = out;
    for (const k of path.slice(0, -1)) {
      const next = into[k];
      if (next !== undefined && (typeof next !== 'object' || next === null || Array.isArray(next))) throw new UsageError(`${flag}: "${pair}": ${k} is already ${JSON.stringify(next)}`);
      into = (into[k] ??= {}) as Record<string, unknown>;
    }
    into[path.at(-1)!] = value;
  }
  return out;
}

/** `--input` then `--param` over it: the job's parameters (an object), or undefined when neither is given. */
export function givenParams(input: string | undefined, params: readonly string[] | undefined): Record<string, unknown> | undefined {
  if (input === undefined && (params === undefined || params.length === 0)) return undefined;
  const base = input === undefined ? {} : jsonArgument(input, '--input');
  if (typeof base !== 'object' || base === null || Array.isArray(base)) throw new UsageError(`--input: the application's parameters must be a JSON object, got ${JSON.stringify(base)}`);
  return merge(base as Record<string, unknown>, paramPairs(params ?? []));
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? merge(b, v) : v;
  }
  return out;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** `--tasks`: a JSON array of { name?, iterations, params? } (a task's params over the job's). */
export function givenTasks(text: string): Array<IterativeTask<Record<string, unknown>>> {
  const tasks = jsonArgument(text, '--tasks');
  if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError('--tasks: a non-empty JSON array of { "name"?, "iterations", "params"? }');
  return tasks.map((t: unknown, k) => {
    if (!isObject(t)) throw new UsageError(`--tasks: task ${k} is not an object { "name"?, "iterations", "params"? }`);
    const unknownKey = Object.keys(t).find((key) => !['name', 'iterations', 'params'].includes(key));
    if (unknownKey !== undefined) throw new UsageError(`--tasks: task ${k} has "${unknownKey}" (a task has name, iterations and params)`);
    if (!Number.isSafeInteger(t.iterations) || (t.iterations as number) < 1) throw new UsageError(`--tasks: task ${k}: iterations must be a whole number ≥ 1, got ${JSON.stringify(t.iterations)}`);
    if (t.name !== undefined && (typeof t.name !== 'string' || t.name === '')) throw new UsageError(`--tasks: task ${k}: name must be a non-empty string`);
    if (t.params !== undefined && !isObject(t.params)) throw new UsageError(`--tasks: task ${k}: params must be a JSON object`);
    return t as unknown as IterativeTask<Record<string, unknown>>;
  });
}

/**
 * The parameters a built-in application runs with: its defaults, the job's given ones over them, and
 * each task's over those; a parameter it does not have, or of the wrong type, is refused with its name.
 */
export function builtinParams(app: IterativeApplication, params: Record<string, unknown> | undefined, tasks: Array<IterativeTask<Record<string, unknown>>> | undefined): { params: unknown; tasks?: Array<IterativeTask<unknown>> } {
  const job = check(() => applicationParams(app, params ?? {}, params === undefined ? 'defaults' : '--input/--param')) as Record<string, unknown>;
  if (!tasks) return { params: job };
  return {
    params: job,
    tasks: tasks.map((t, k) => ({ ...t, params: check(() => applicationParams(app, { ...(params ?? {}), ...(t.params ?? {}) }, `--tasks: task ${k}`)) })),
  };
}

function check<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
