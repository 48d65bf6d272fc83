import { CONSOLE_METHODS } from './sandbox-console.js';

/**
 * What a captured closure may use from the global scope: the ECMAScript intrinsics, which exist in
 * every sandbox and travel by name (`Math.max`, `Array.isArray`, `Symbol.iterator`), and what it may
 * not: host I/O and process access, timers, synchronization, dynamic code.
 */

/** ECMAScript globals present in every isolate: free references to them stay global references. */
export const SAFE_GLOBALS: ReadonlySet<string> = new Set([
  'Object', 'Array', 'Number', 'parseFloat', 'parseInt', 'Infinity', 'NaN', 'undefined', 'Boolean', 'String',
  'Symbol', 'Date', 'Promise', 'RegExp', 'Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError',
  'SyntaxError', 'TypeError', 'URIError', 'JSON', 'Math', 'Intl', 'ArrayBuffer', 'Uint8Array', 'Int8Array',
  'Uint16Array', 'Int16Array', 'Uint32Array', 'Int32Array', 'Float32Array', 'Float64Array', 'Uint8ClampedArray',
  'BigUint64Array', 'BigInt64Array', 'DataView', 'Map', 'BigInt', 'Set', 'WeakMap', 'WeakSet', 'Proxy', 'Reflect',
  'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'isFinite', 'isNaN',
  'WeakRef', 'FinalizationRegistry',
  // Not ECMAScript, but every sandbox has one: what a task prints comes back with its outcome (sandbox-console.ts).
  'console',
]);

/** Globals refused by name, with the reason given in the capture error. */
export const REFUSED_GLOBALS: ReadonlyMap<string, string> = new Map([
  ...['process', 'require', 'module', 'exports', '__filename', '__dirname', 'Buffer', 'globalThis', 'global', 'self', 'window'].map((n) => [n, 'host access'] as const),
  ...['fetch', 'WebSocket', 'XMLHttpRequest', 'Request', 'Response', 'Headers', 'FormData', 'Blob', 'File', 'crypto', 'performance', 'navigator', 'localStorage', 'BroadcastChannel', 'MessageChannel', 'MessagePort', 'Worker'].map((n) => [n, 'I/O'] as const),
  ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask'].map((n) => [n, 'timers (I/O)'] as const),
  ['Atomics', 'synchronization (Atomics.wait)'],
  ['SharedArrayBuffer', 'shared memory (synchronization)'],
  ['eval', 'dynamic code (eval)'],
  ['WebAssembly', 'native code (WebAssembly)'],
]);

/** Intrinsics refused even when reached as values (an alias like `const f = Function`). */
const REFUSED_INTRINSICS: ReadonlyMap<string, string> = new Map([
  ['Function', 'dynamic code (Function)'],
  ['eval', 'dynamic code (eval)'],
  ['Atomics.wait', 'synchronization (Atomics.wait)'],
  ['Atomics.waitAsync', 'synchronization (Atomics.waitAsync)'],
]);

let table: Map<unknown, string> | undefined;

/**
 * Every intrinsic value reachable from the safe globals in two steps (`Math.max`,
 * `Array.prototype.push`, `Symbol.iterator`), by identity, with the path that names it in any realm.
 */
export function intrinsicTable(): Map<unknown, string> {
  if (table) return table;
  const t = new Map<unknown, string>();
  const add = (value: unknown, path: string) => {
    if ((typeof value === 'function' || typeof value === 'object' || typeof value === 'symbol') && value !== null && !t.has(value)) t.set(value, path);
  };
  const members = (owner: object, prefix: string) => {
    for (const key of Reflect.ownKeys(owner)) {
      const d = Object.getOwnPropertyDescriptor(owner, key);
      if (!d || !('value' in d)) continue; // never run a getter
      const name = typeof key === 'symbol' ? `[${intrinsicTable.symbolName(key)}]` : `.${key}`;
      if (name === '[undefined]') continue;
      add(d.value, prefix + name);
    }
  };
  for (const name of [...SAFE_GLOBALS, 'Function', 'eval', 'Atomics']) {
    const value = (globalThis as Record<string, unknown>)[name];
    add(value, name);
  }
  for (const sym of Reflect.ownKeys(Symbol)) {
    const v = (Symbol as unknown as Record<PropertyKey, unknown>)[sym];
    if (typeof v === 'symbol') add(v, `Symbol.${String(sym)}`);
  }
  for (const name of [...SAFE_GLOBALS, 'Function', 'Atomics']) {
    const value = (globalThis as Record<string, unknown>)[name];
    if ((typeof value !== 'function' && typeof value !== 'object') || value === null) continue;
    if (name === 'console') {
      for (const method of CONSOLE_METHODS) add((value as Record<string, unknown>)[method], `console.${method}`);
      continue;
    }
    members(value, name);
    const proto = (value as { prototype?: unknown }).prototype;
    if (typeof proto === 'object' && proto !== null) members(proto, `${name}.prototype`);
  }
  table = t;
  return t;
}
intrinsicTable.symbolName = (sym: symbol): string | undefined => {
  for (const key of Reflect.ownKeys(Symbol)) if ((Symbol as unknown as Record<PropertyKey, unknown>)[key] === sym) return `Symbol.${String(key)}`;
  return undefined;
};

/** The reason an intrinsic path may not be distributed, if any. */
export function refusedIntrinsic(path: string): string | undefined {
  return REFUSED_INTRINSICS.get(path) ?? (path.startsWith('Function.prototype.constructor') ? 'dynamic code (Function)' : undefined);
}

/** Resolves an intrinsic path (`Math.max`, `Array.prototype[Symbol.iterator]`) in a realm's global object. */
export function resolveIntrinsic(path: string, global: Record<string, unknown>): unknown {
  const parts = path.match(/[^.[\]]+|\[[^\]]+\]/g) ?? [];
  let value: unknown = global;
  for (const part of parts) {
    const key = part.startsWith('[') ? resolveIntrinsic(part.slice(1, -1), global) : part;
    value = (value as Record<PropertyKey, unknown>)[key as PropertyKey];
  }
  return value;
}
