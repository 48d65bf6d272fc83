/**
 * The wire format of captured code and data (seed 002 §3.2–3.3), as JSON: a graph of nodes with
 * identity (a node is referenced by its index, so shared and cyclic references survive), the
 * distinct function sources ("codes") once each, and the tasks as roots. The same format carries
 * a task's changes and new objects back. Pure data and pure functions: it is also bundled into the
 * sandbox.
 */

import type { ConsoleRecord } from './sandbox-console.js';

/** Any function value (closures are captured whatever their signature). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyFunction = (...args: any[]) => unknown;

/** A value: a JSON primitive, or a tagged object for what JSON cannot say. */
export type Val =
  | number | string | boolean | null
  | { r: number } // reference to node r
  | { u: 1 } // undefined
  | { n: 'NaN' | 'Infinity' | '-Infinity' | '-0' }
  | { big: string }
  | { h: 1 }; // an array hole

/** A property key: a string, or a reference to a symbol node. */
export type Key = string | { r: number };

/**
 * A node of the graph. Bulk data of at least BLOB_MIN_BYTES travels by content (content-blobs.ts): a
 * typed array's or ArrayBuffer's bytes, or an array's elements when all are primitives (their JSON), as a
 * blob named by its SHA-256 hash `h` instead of inline (`b`, `v`).
 */
export type GraphNode =
  | { t: 'o'; p: [Key, Val][]; cls?: Val; acc?: [Key, Val, Val][]; np?: 1 } // object (np: null prototype)
  | { t: 'a'; v: Val[]; h?: undefined }
  | { t: 'a'; h: string; v?: undefined } // elements: the blob's UTF-8 JSON of Val[]
  | { t: 'ta'; c: string; b: string; h?: undefined } // typed array, bytes in base64
  | { t: 'ta'; c: string; h: string; b?: undefined } // its bytes: the blob
  | { t: 'ab'; b: string; h?: undefined } // ArrayBuffer
  | { t: 'ab'; h: string; b?: undefined }
  | { t: 'sh'; h: string } // a value shared with distribution.put: its segment, the blob `h` (SharedSegment)
  | { t: 'm'; e: [Val, Val][] }
  | { t: 's'; e: Val[] }
  | { t: 'd'; v: number }
  | { t: 're'; s: string; f: string }
  | { t: 'f'; c: number; env: Val[]; p?: [Key, Val][] } // function: code index, captured bindings in code order
  | { t: 'i'; path: string } // an intrinsic (Math.max), resolved by name in the sandbox
  | { t: 'pk'; k: number; f: number; p: string[] } // an export of a package: packages[k], its file f, the export path p
  | { t: 'y'; d?: string; g?: string }; // symbol: description, or registry key (Symbol.for)

export interface Code {
  /** Source as `Function.prototype.toString` gives it. */
  src: string;
  /** Names of the bindings it closes over, in the order of `env` in its function nodes. */
  env: string[];
  form: 'expression' | 'method';
  /** ECMAScript globals it uses (bound once per instance: a vm context's global lookups are slow). */
  g?: string[];
  /** Where it was defined on the client, `file:line` (to map remote stacks back). */
  at?: string;
  /** Strict code (a module's, a class, or a 'use strict' body): compiled strict remotely too. */
  strict?: 1;
}

/**
 * A package the tasks use (seed 002 §3.2: imported packages travel by reference when the service has
 * them, bundled otherwise). `files` are the package's modules whose exports are referenced (paths
 * relative to the package root); `code`, when present, is their bundle: a script whose value is
 * `{ f0: namespace of files[0], … }`, evaluated in the sandbox.
 */
export interface PackageSpec {
  name: string;
  version: string;
  files: string[];
  code?: string;
}

export interface TaskSpec {
  /** The closure (a function node). */
  f: number;
  /** Arguments (a parallel-for passes the index). */
  a?: Val[];
  /** Client-side label, `task 7`. */
  label?: string;
}

export interface CaptureGraph {
  codes: Code[];
  nodes: GraphNode[];
  tasks: TaskSpec[];
  packages?: PackageSpec[];
  /** The blobs the nodes name (`h`), with their sizes: each travels once per connection (content-blobs.ts). */
  blobs?: Record<string, number>;
}

/**
 * A value shared with `distribution.put` (data only): its own graph of nodes, numbered from 0 (the root),
 * with a readable path per node; its bulk data are blobs like a batch's. Tasks read it; a task that
 * writes to it fails.
 */
export interface SharedSegment {
  nodes: GraphNode[];
  names: string[];
  blobs?: Record<string, number>;
}

/** Where the sandbox keeps the evaluated package bundles (by package index), on its global object. */
export const PACKAGES_GLOBAL = '__tp_packages';

/** One write a task made, against a node of the captured graph. */
export type Write =
  | { id: number; k: Key; v: Val } // field or array element set
  | { id: number; k: Key; del: 1 } // field deleted
  | { id: number; len: number } // array length changed
  | { id: number; ta: [number, string][] } // typed array: runs of changed elements [first index, bytes base64]
  | { id: number; mset: [Val, Val][]; mdel: Val[] } // Map entries
  | { id: number; sadd: Val[]; sdel: Val[] } // Set members
  | { id: number; date: number };

/** What a task sends back: its result, its writes and the objects it created (ids from the graph's size on). */
export interface TaskOutcome {
  ok: boolean;
  v?: Val;
  w?: Write[];
  /** New nodes, numbered from `base`. */
  n?: GraphNode[];
  base?: number;
  /** Error name, message and stack (with sandbox positions) when `ok` is false. */
  err?: { name: string; message: string; stack?: string };
  /** What the task printed (its `console`), bounded. */
  log?: ConsoleRecord;
  /** Execution and diffing time in the sandbox (ms). */
  ms?: number;
  dms?: number;
}

/** A function's own keys that are not its state (what every function or class has): neither captured nor compared. */
export const FUNCTION_OWN_KEYS: ReadonlySet<PropertyKey> = new Set(['length', 'name', 'prototype', 'arguments', 'caller']);

/** Keys that could reach a prototype when applied: refused in every direction. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export function isRef(v: Val): v is { r: number } {
  return typeof v === 'object' && v !== null && 'r' in v;
}

/** Encodes a primitive; returns undefined for objects and functions (they become nodes). */
export function encodePrimitive(v: unknown): Val | undefined {
  switch (typeof v) {
    case 'string': case 'boolean': return v;
    case 'number':
      if (Number.isNaN(v)) return { n: 'NaN' };
      if (v === Infinity) return { n: 'Infinity' };
      if (v === -Infinity) return { n: '-Infinity' };
      if (Object.is(v, -0)) return { n: '-0' };
      return v;
    case 'undefined': return { u: 1 };
    case 'bigint': return { big: v.toString() };
    case 'object': return v === null ? null : undefined;
    default: return undefined;
  }
}

/** Decodes a non-reference value. */
export function decodePrimitive(v: Val): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if ('u' in v || 'h' in v) return undefined;
  if ('n' in v) return v.n === '-0' ? -0 : Number(v.n);
  if ('big' in v) return BigInt(v.big);
  throw new Error('a reference is not a primitive');
}

/** True when two encoded values are the same value (Object.is on primitives, identity on refs). */
export function sameVal(a: Val, b: Val): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if ('r' in a) return 'r' in b && a.r === b.r;
  if ('n' in a) return 'n' in b && a.n === b.n;
  if ('big' in a) return 'big' in b && a.big === b.big;
  if ('u' in a) return 'u' in b;
  if ('h' in a) return 'h' in b;
  return false;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Node's Buffer where there is one (the client, the service); none in a sandbox. */
const NodeBuffer = (globalThis as { Buffer?: { from(b: ArrayBufferLike, o: number, l: number): { toString(e: string): string }; from(s: string, e: string): Uint8Array } }).Buffer;

/** Base64 of bytes: with Buffer when present, else by table into a byte array decoded in slices. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
  const n = bytes.length;
  const codes = new Uint8Array(Math.ceil(n / 3) * 4);
  let o = 0;
  for (let i = 0; i < n; i += 3) {
    const a = bytes[i]!, b = i + 1 < n ? bytes[i + 1]! : 0, c = i + 2 < n ? bytes[i + 2]! : 0;
    codes[o++] = B64.charCodeAt(a >> 2);
    codes[o++] = B64.charCodeAt(((a & 3) << 4) | (b >> 4));
    codes[o++] = i + 1 < n ? B64.charCodeAt(((b & 15) << 2) | (c >> 6)) : 61;
    codes[o++] = i + 2 < n ? B64.charCodeAt(c & 63) : 61;
  }
  let out = '';
  for (let i = 0; i < codes.length; i += 8192) out += String.fromCharCode.apply(null, codes.subarray(i, i + 8192) as unknown as number[]);
  return out;
}

let lookup: Int16Array | undefined;

export function base64ToBytes(s: string): Uint8Array {
  if (NodeBuffer) {
    const b = NodeBuffer.from(s, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.length).slice(); // own, aligned memory (Buffers share a pool)
  }
  if (!lookup) {
    lookup = new Int16Array(128).fill(-1);
    for (let i = 0; i < B64.length; i++) lookup[B64.charCodeAt(i)] = i;
  }
  const len = s.length;
  const pad = len > 0 && s[len - 1] === '=' ? (s[len - 2] === '=' ? 2 : 1) : 0;
  const out = new Uint8Array((len / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < len; i += 4) {
    const a = lookup[s.charCodeAt(i)]!, b = lookup[s.charCodeAt(i + 1)]!, c = lookup[s.charCodeAt(i + 2)] ?? 0, d = lookup[s.charCodeAt(i + 3)] ?? 0;
    const n = (a << 18) | (b << 12) | ((c < 0 ? 0 : c) << 6) | (d < 0 ? 0 : d);
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

/** UTF-8 bytes as text, without host APIs (a sandbox has no TextDecoder); ASCII, the usual case, in slices. */
export function utf8Text(bytes: Uint8Array): string {
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! > 0x7f) { ascii = false; break; }
  if (ascii) {
    let out = '';
    for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
    return out;
  }
  const units: number[] = [];
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    let cp: number;
    if (b < 0x80) { cp = b; i += 1; }
    else if (b < 0xe0) { cp = ((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f); i += 2; }
    else if (b < 0xf0) { cp = ((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f); i += 3; }
    else { cp = ((b & 0x07) << 18) | ((bytes[i + 1]! & 0x3f) << 12) | ((bytes[i + 2]! & 0x3f) << 6) | (bytes[i + 3]! & 0x3f); i += 4; }
    if (cp > 0xffff) { cp -= 0x10000; units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff)); } else units.push(cp);
  }
  let out = '';
  for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode.apply(null, units.slice(i, i + 8192));
  return out;
}

/** Typed-array constructors by name (the same in every realm). */
export const TYPED_ARRAYS = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'] as const;
