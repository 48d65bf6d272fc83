/**
 * Reads what a closure closes over through the V8 inspector, in process: a function's `[[Scopes]]`
 * (closure, block, script and module scopes, innermost first) and `[[FunctionLocation]]` — the
 * mechanism Pulumi's closure serialization uses on Node. The in-process session answers
 * synchronously, so capture needs no await. Values come back through a global slot by
 * `Runtime.callFunctionOn` (the inspector's object ids are only handles); getters are never called,
 * because scope objects hold variables, not properties with accessors.
 */
import { Session } from 'node:inspector';
import { findSourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { AnyFunction } from './graph-format.js';

interface RemoteObject { type: string; subtype?: string; value?: unknown; unserializableValue?: string; objectId?: string; description?: string }
interface PropertyDescriptor { name: string; value?: RemoteObject; get?: RemoteObject }
interface InternalProperty { name: string; value?: RemoteObject }

export interface FunctionLocation {
  scriptId: string;
  /** 0-based, as V8 reports them. */
  line: number;
  column: number;
}

const SLOT = '__tidepoolCaptureSlot';
const GROUP = 'tidepool-capture';
let session: Session | undefined;
const scriptUrls = new Map<string, string>();
/** Scripts that are ECMAScript modules (strict code throughout). */
const moduleScripts = new Set<string>();
const strictScripts = new Map<string, boolean>();

function post<T>(method: string, params: object): T {
  if (!session) {
    session = new Session();
    session.connect();
    session.on('Debugger.scriptParsed', (m: { params: { scriptId: string; url: string; isModule?: boolean } }) => {
      scriptUrls.set(m.params.scriptId, m.params.url);
      if (m.params.isModule) moduleScripts.add(m.params.scriptId);
    });
  }
  let result: T | undefined;
  let error: Error | null = null;
  let answered = false;
  session.post(method, params, (err, res) => {
    error = err;
    result = res as T;
    answered = true;
  });
  if (!answered) throw new Error(`inspector: ${method} was not answered synchronously`);
  if (error) throw error;
  return result as T;
}

/** Handles fetched ahead for functions about to be captured (valid until the handles are released). */
let prefetched = new Map<unknown, string>();

/**
 * Fetches handles for many functions in two inspector calls instead of one each: the functions are
 * put in an array, and the array's elements are listed.
 */
export function prefetchHandles(fns: readonly unknown[]): void {
  if (fns.length < 2) return;
  const array = handleOf(fns);
  const { result } = post<{ result: PropertyDescriptor[] }>('Runtime.getProperties', { objectId: array, ownProperties: true, objectGroup: GROUP });
  for (const entry of result) {
    const i = Number(entry.name);
    if (Number.isInteger(i) && entry.value?.objectId && i < fns.length) prefetched.set(fns[i], entry.value.objectId);
  }
}

/** An inspector handle for a value of this realm. */
function handleOf(value: unknown): string {
  const known = prefetched.get(value);
  if (known !== undefined) return known;
  (globalThis as Record<string, unknown>)[SLOT] = value;
  try {
    const { result } = post<{ result: RemoteObject }>('Runtime.evaluate', { expression: `globalThis.${SLOT}`, objectGroup: GROUP, silent: true });
    if (!result.objectId) throw new Error('inspector: no object id for a function');
    return result.objectId;
  } finally {
    delete (globalThis as Record<string, unknown>)[SLOT];
  }
}

/** The value an inspector handle stands for. */
function valueOf(remote: RemoteObject): unknown {
  if (!remote.objectId) {
    if (remote.type === 'undefined') return undefined;
    if (remote.unserializableValue !== undefined) {
      const u = remote.unserializableValue;
      if (u.endsWith('n')) return BigInt(u.slice(0, -1));
      return u === '-0' ? -0 : Number(u);
    }
    return remote.value;
  }
  post('Runtime.callFunctionOn', {
    objectId: remote.objectId,
    functionDeclaration: `function (v) { globalThis.${SLOT} = v; }`,
    arguments: [{ objectId: remote.objectId }],
    silent: true,
  });
  const value = (globalThis as Record<string, unknown>)[SLOT];
  delete (globalThis as Record<string, unknown>)[SLOT];
  return value;
}

export interface ClosureView {
  location: FunctionLocation | undefined;
  /** Looks a free name up in the closure's scopes (innermost first); `found: false` when no closure, script or module scope has it. */
  lookup(name: string): { found: true; value: unknown } | { found: false };
  /** `[[TargetFunction]]` of a bound function, when it is one. */
  bound: boolean;
}

type Lookup = { found: true; value: unknown } | { found: false };

/**
 * Module scopes seen during one capture, by script id: every function of a module shares its module
 * scope, which can hold many bindings (each function's description is its whole source). Its variables
 * are listed once per handle group, and a name's value is read once per capture (no code runs while a
 * batch is captured, so a binding cannot change meanwhile).
 */
export class ModuleScopeCache {
  /** Variables of a module scope: valid until the handles are released. */
  readonly vars = new Map<string, Map<string, PropertyDescriptor>>();
  /** Values looked up: valid for the whole capture. */
  readonly values = new Map<string, Map<string, Lookup>>();
}

/** Opens a function's scopes for lookups; call `release()` once a capture is done. */
export function viewClosure(fn: AnyFunction, modules?: ModuleScopeCache): ClosureView {
  const id = handleOf(fn);
  const { internalProperties = [] } = post<{ internalProperties?: InternalProperty[] }>('Runtime.getProperties', { objectId: id, ownProperties: true, nonIndexedPropertiesOnly: true, objectGroup: GROUP });
  let location: FunctionLocation | undefined;
  let scopesId: string | undefined;
  let bound = false;
  for (const p of internalProperties) {
    if (p.name === '[[FunctionLocation]]') {
      const v = p.value?.value as { scriptId: string; lineNumber: number; columnNumber: number } | undefined;
      if (v) location = { scriptId: v.scriptId, line: v.lineNumber, column: v.columnNumber };
    } else if (p.name === '[[Scopes]]') scopesId = p.value?.objectId;
    else if (p.name === '[[TargetFunction]]') bound = true;
  }
  // Scopes are read lazily, innermost first, and only until a name is found: a module scope can be large.
  let list: RemoteObject[] | undefined;
  const read: Map<string, PropertyDescriptor>[] = [];
  const scopeAt = (i: number): RemoteObject | undefined => {
    if (!list) {
      list = [];
      if (scopesId) {
        const all = post<{ result: PropertyDescriptor[] }>('Runtime.getProperties', { objectId: scopesId, ownProperties: true, objectGroup: GROUP });
        for (const entry of all.result) if (entry.value?.objectId && entry.value.description !== 'Global') list.push(entry.value);
      }
    }
    return list[i];
  };
  const variables = (scope: RemoteObject): Map<string, PropertyDescriptor> => {
    const vars = post<{ result: PropertyDescriptor[] }>('Runtime.getProperties', { objectId: scope.objectId, ownProperties: true, nonIndexedPropertiesOnly: true, objectGroup: GROUP });
    return new Map(vars.result.map((v) => [v.name, v]));
  };
  const moduleLookup = (scope: RemoteObject, scriptId: string, cache: ModuleScopeCache, name: string): Lookup => {
    let values = cache.values.get(scriptId);
    if (!values) cache.values.set(scriptId, (values = new Map()));
    let hit = values.get(name);
    if (!hit) {
      let vars = cache.vars.get(scriptId);
      if (!vars) cache.vars.set(scriptId, (vars = variables(scope)));
      const d = vars.get(name);
      hit = d?.value ? { found: true, value: valueOf(d.value) } : { found: false };
      values.set(name, hit);
    }
    return hit;
  };
  return {
    location,
    bound,
    lookup(name) {
      for (let i = 0; ; i++) {
        const scope = scopeAt(i);
        if (!scope) return { found: false };
        if (modules && location && scope.description === 'Module') {
          const hit = moduleLookup(scope, location.scriptId, modules, name);
          if (hit.found) return hit;
          continue;
        }
        read[i] ??= variables(scope);
        const d = read[i]!.get(name);
        if (d?.value) return { found: true, value: valueOf(d.value) };
      }
    },
  };
}

/** Frees the inspector's handles of a capture (a module scope cache's variable lists go with them). */
export function releaseHandles(modules?: ModuleScopeCache): void {
  if (session) post('Runtime.releaseObjectGroup', { objectGroup: GROUP });
  modules?.vars.clear();
  prefetched = new Map();
}

/**
 * The file a script id belongs to, relative to the working directory (`node:fs` for Node's own).
 * Script URLs are collected by enabling the debugger once (it reports every parsed script) and
 * disabling it again, so it costs nothing while programs run; only error messages need it.
 */
export function scriptFile(scriptId: string): string | undefined {
  const url = scriptUrl(scriptId);
  return url === undefined ? undefined : displayFile(url);
}

/** The absolute path of a script that is a file (a file: URL, or a path for CommonJS), else undefined. */
export function scriptPath(scriptId: string): string | undefined {
  const url = scriptUrl(scriptId);
  if (url === undefined) return undefined;
  if (url.startsWith('file:')) return fileURLToPath(url);
  return path.isAbsolute(url) ? url : undefined;
}

function scriptUrl(scriptId: string): string | undefined {
  if (!scriptUrls.has(scriptId)) {
    post('Debugger.enable', {});
    post('Debugger.disable', {});
  }
  return scriptUrls.get(scriptId);
}

/**
 * Whether a script's code is strict: an ECMAScript module, or a script (a CommonJS module) whose source
 * starts with a 'use strict' directive. Captured functions keep their mode remotely; cached per script.
 */
export function scriptIsStrict(scriptId: string): boolean {
  let strict = strictScripts.get(scriptId);
  if (strict === undefined) {
    scriptUrl(scriptId); // collects the module flags
    strict = moduleScripts.has(scriptId);
    if (!strict) {
      post('Debugger.enable', {});
      try {
        const { scriptSource } = post<{ scriptSource: string }>('Debugger.getScriptSource', { scriptId });
        strict = /^(?:#![^\n]*\n)?(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*(['"])use strict\1/.test(scriptSource);
      } catch {
        strict = false; // a script gone (collected): sloppy, as most scripts that are not modules
      } finally {
        post('Debugger.disable', {});
      }
    }
    strictScripts.set(scriptId, strict);
  }
  return strict;
}

/** `file:line` of a position inside a function's source, given the function's location (1-based line). */
export function sourcePosition(location: FunctionLocation | undefined, source: string, offset: number): string {
  if (!location) return '<unknown location>';
  const before = source.slice(0, Math.max(0, offset));
  const newline = before.lastIndexOf('\n');
  return clientPosition(location, before.split('\n').length - 1, newline < 0 ? before.length : before.length - newline - 1);
}

/** `file:line:column` of a position in a function's source given as (line, column) from its start, both 0-based. */
export function clientPosition(location: FunctionLocation, relLine: number, relColumn: number, withColumn = false): string {
  const line = location.line + relLine;
  const column = relLine === 0 ? location.column + relColumn : relColumn;
  const url = scriptUrl(location.scriptId);
  const file = url ? displayFile(url) : `<script ${location.scriptId}>`;
  // Transpiled modules (tsx, tsc with source maps): report the original line.
  const map = url?.startsWith('file:') ? findSourceMap(fileURLToPath(url)) : undefined;
  const entry = map?.findEntry(line, column) as { originalSource?: string; originalLine?: number } | undefined;
  if (entry?.originalSource && entry.originalLine !== undefined) {
    const original = entry.originalSource.startsWith('file:') ? displayFile(entry.originalSource) : file;
    const col = (entry as { originalColumn?: number }).originalColumn ?? 0;
    return `${original}:${entry.originalLine + 1}${withColumn ? `:${col + 1}` : ''}`;
  }
  return `${file}:${line + 1}${withColumn ? `:${column + 1}` : ''}`;
}

function displayFile(url: string): string {
  if (!url.startsWith('file:')) return url;
  const file = fileURLToPath(url);
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}
