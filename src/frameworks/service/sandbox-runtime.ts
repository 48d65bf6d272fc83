/**
 * What runs inside a sandbox (an isolate, or a `node:vm` context locally): rebuilds a task's
 * reachable part of the captured graph afresh for every task (so every task reads the batch's
 * start snapshot), runs the closure, and compares every object it rebuilt with the snapshot it
 * came from (seed 002 §3.3): fields, array elements, typed arrays element-wise, Map and Set
 * entries, dates; objects the task created come back as new nodes. No host APIs are used here.
 */
import {
  FUNCTION_OWN_KEYS, base64ToBytes, bytesToBase64, encodePrimitive, sameVal, utf8Text,
  type CaptureGraph, type Code, type GraphNode, type Key, type SharedSegment, type TaskOutcome, type Val, type Write,
} from './graph-format.js';
import { GraphDecoder, type Factory } from './graph-decoder.js';
import { ConsoleSink, sandboxConsole } from './sandbox-console.js';

export type { Factory };

export const TASK_SCRIPT = 'tidepool-task.js';

/**
 * The script text of a graph's factories, one per code. Every source starts on a line of its own at
 * column 0, so a sandbox stack position maps back to (code, line, column) — see `codeLines`.
 */
export function factoriesScript(codes: Code[]): { text: string; firstLines: number[] } {
  const firstLines: number[] = [];
  let line = 0;
  const parts: string[] = [];
  for (const code of codes) {
    const globals = (code.g ?? []).filter((n) => /^[A-Z][A-Za-z0-9]*$/.test(n) && !code.env.includes(n));
    const lets = (globals.length > 0 ? `const ${globals.map((n) => `${n} = globalThis.${n}`).join(', ')};` : '') + (code.env.length > 0 ? `let ${code.env.join(', ')};` : '');
    const set = code.env.map((n, i) => `${n} = __tp_v[${i}];`).join(' ');
    // [set the captured bindings, evaluate the source]: bindings first, since a class's static blocks read them.
    const head = `function () { ${code.strict ? "'use strict'; " : ''}${lets} return [function (__tp_v) { ${set} }, function () { return ${code.form === 'method' ? '__tp_method({' : '('}`;
    const tail = `${code.form === 'method' ? '})' : ')'}; }]; },`;
    parts.push(head);
    firstLines.push(line + 3); // 1-based: the prefix line, then this code's head line, then its source
    parts.push(code.src);
    parts.push(tail);
    line += 2 + code.src.split('\n').length;
  }
  const prefix = '(function (__tp_method) { return [';
  const text = `${prefix}\n${parts.join('\n')}\n]; })(function (o) { const d = Object.getOwnPropertyDescriptors(o); const k = Reflect.ownKeys(d)[0]; return d[k].value ?? d[k].get ?? d[k].set; })`;
  return { text, firstLines };
}

/** The blobs a batch names, by hash (content-blobs.ts): what the sandbox was given. */
export type BlobSource = (hash: string) => Uint8Array | undefined;

/** A `distribution.put` value as one task rebuilt it, to check after the task that it was only read. */
interface SharedUse {
  segment: SharedSegment;
  wrapper: { value?: unknown };
  root: unknown;
  built: Map<number, unknown>;
  snapshot: Map<number, Uint8Array>;
}

export class SandboxRuntime {
  private readonly graph: CaptureGraph;
  private readonly snapshotBytes = new Map<number, Uint8Array>();
  /**
   * Typed arrays of earlier tasks, restored to their snapshot after their diff (only the changed runs
   * are copied back): the next task reuses them instead of copying every captured array afresh. A task
   * takes them out while it runs; one that fails or is stopped (time limit) never puts them back.
   */
  private readonly spareTyped = new Map<number, ArrayBufferView>();
  /** `distribution.put` segments, parsed once per batch. */
  private readonly segments = new Map<string, SharedSegment>();
  /** The segments the running task rebuilt. */
  private sharedUses = new Map<string, SharedUse>();

  /** What the running task prints (its `console`), taken into its outcome. */
  private readonly console = new ConsoleSink();

  constructor(graphJson: string, private readonly factories: Factory[], private readonly global: Record<string, unknown>, private readonly blobs: BlobSource = () => undefined) {
    this.graph = JSON.parse(graphJson) as CaptureGraph;
    global.console = sandboxConsole(() => this.console);
  }

  get taskCount(): number {
    return this.graph.tasks.length;
  }

  /** Runs task `i` and returns its outcome as JSON. */
  run(i: number): string {
    const spec = this.graph.tasks[i];
    if (!spec) throw new Error(`no task ${i}`);
    this.console.take(); // what a task stopped by its time limit printed is not the next one's
    this.sharedUses = new Map();
    const nodeAt = (id: number) => this.nodeAt(this.graph.nodes, id);
    const decoder = new GraphDecoder(nodeAt, this.global, {
      factories: this.factories,
      bytesOf: (id, node) => this.bytesOf(this.snapshotBytes, id, node),
      spareTyped: (id) => this.takeSpare(id),
      shared: (hash) => this.shared(hash),
    });
    const built = decoder.built;
    const t0 = Date.now();
    let outcome: TaskOutcome;
    try {
      const fn = decoder.decode({ r: spec.f }) as (...a: unknown[]) => unknown;
      const args = (spec.a ?? []).map((a) => decoder.decode(a));
      const result = fn(...args);
      if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
        throw new TypeError('a distributed task must be synchronous (it returned a promise)');
      }
      const ms = Date.now() - t0;
      this.checkSharedUntouched();
      const diff = new Differ(nodeAt, this.graph.nodes.length, built, this.snapshotBytes, this.spareTyped);
      const v = diff.encode(result);
      const w = diff.writes();
      outcome = { ok: true, v, w, n: diff.fresh, base: this.graph.nodes.length };
      const log = this.console.take();
      if (log) outcome.log = log;
      // `ms` and `dms` last: the service reads `dms` at the end of the text (batch-cost-event.ts).
      outcome.ms = ms;
      outcome.dms = Date.now() - t0 - ms;
    } catch (e) {
      const err = e as { name?: unknown; message?: unknown; stack?: unknown };
      outcome = { ok: false, err: { name: String(err?.name ?? 'Error'), message: String(err?.message ?? e), stack: typeof err?.stack === 'string' ? err.stack : undefined } };
      const log = this.console.take();
      if (log) outcome.log = log;
      outcome.ms = Date.now() - t0;
    }
    return JSON.stringify(outcome);
  }

  /** A node, with an array whose elements are a blob materialized once (they are parsed on first use). */
  private nodeAt(nodes: GraphNode[], id: number): GraphNode | undefined {
    const node = nodes[id];
    if (node?.t === 'a' && node.v === undefined) {
      const bytes = this.blob(node.h);
      nodes[id] = { t: 'a', v: JSON.parse(utf8Text(bytes)) as Val[] };
      return nodes[id];
    }
    return node;
  }

  private blob(hash: string): Uint8Array {
    const bytes = this.blobs(hash);
    if (bytes === undefined) throw new Error(`the sandbox was not given blob ${hash.slice(0, 12)}`);
    return bytes;
  }

  /**
   * A `distribution.put` value, rebuilt afresh for this task from its segment (snapshot isolation, as
   * for every captured value); after the task it must be as it was (`checkSharedUntouched`).
   */
  private shared(hash: string): unknown {
    let segment = this.segments.get(hash);
    if (!segment) this.segments.set(hash, (segment = JSON.parse(utf8Text(this.blob(hash))) as SharedSegment));
    const use = this.sharedUses.get(hash);
    if (use) return use.wrapper;
    const snapshot = new Map<number, Uint8Array>();
    const seg = segment;
    const decoder = new GraphDecoder((id) => this.nodeAt(seg.nodes, id), this.global, { bytesOf: (id, node) => this.bytesOf(snapshot, id, node) });
    const root = decoder.decode({ r: 0 });
    const wrapper = { value: root };
    this.sharedUses.set(hash, { segment, wrapper, root, built: decoder.built, snapshot });
    return wrapper;
  }

  /** Fails the task if it wrote to a value shared with distribution.put (tasks may only read those). */
  private checkSharedUntouched(): void {
    for (const use of this.sharedUses.values()) {
      const keys = Reflect.ownKeys(use.wrapper);
      const where = (id: number) => use.segment.names[id] ?? `node ${id}`;
      if (keys.length !== 1 || keys[0] !== 'value' || use.wrapper.value !== use.root) throw sharedWriteError(`${where(0)} (the shared value itself)`);
      const seg = use.segment;
      const writes = new Differ((id) => this.nodeAt(seg.nodes, id), seg.nodes.length, use.built, use.snapshot, new Map()).writes();
      if (writes.length > 0) throw sharedWriteError(writes.map((w) => `${where(w.id)}${'k' in w ? `.${typeof w.k === 'string' ? w.k : '[symbol]'}` : ''}`).join(', '));
    }
  }

  private takeSpare(id: number): ArrayBufferView | undefined {
    const spare = this.spareTyped.get(id);
    if (spare !== undefined) this.spareTyped.delete(id);
    return spare;
  }

  /** A typed array's or ArrayBuffer's snapshot bytes (inline or a blob), kept for the diffs. */
  private bytesOf(cache: Map<number, Uint8Array>, id: number, node: { b?: string; h?: string }): Uint8Array {
    let bytes = cache.get(id);
    if (!bytes) cache.set(id, (bytes = node.h !== undefined ? this.blob(node.h) : base64ToBytes(node.b ?? '')));
    return bytes;
  }
}

function sharedWriteError(where: string): Error {
  const e = new TypeError(`the task wrote to a value shared with distribution.put, which tasks may only read: ${where}`);
  e.name = 'SharedValueWriteError';
  return e;
}

/** True when `x` is the primitive an encoded snapshot value `prev` stands for (strings, booleans, numbers but −0): no encoding needed. */
function samePrimitive(x: unknown, prev: Val | undefined): boolean {
  if (x !== prev) return false;
  return typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && (x !== 0 || 1 / x > 0));
}

/** Compares what a task rebuilt with the snapshot and encodes its writes and new objects. */
class Differ {
  readonly fresh: GraphNode[] = [];
  private readonly ids = new Map<unknown, number>();

  constructor(private readonly nodeAt: (id: number) => GraphNode | undefined, private readonly base: number, private readonly built: Map<number, unknown>, private readonly snapshotBytes: Map<number, Uint8Array>, private readonly spareTyped: Map<number, ArrayBufferView>) {
    for (const [id, v] of built) if ((typeof v === 'object' && v !== null) || typeof v === 'function' || typeof v === 'symbol') this.ids.set(v, id);
  }

  encode(v: unknown): Val {
    const prim = encodePrimitive(v);
    if (prim !== undefined) return prim;
    const known = this.ids.get(v);
    if (known !== undefined) return { r: known };
    const id = this.base + this.fresh.length;
    this.ids.set(v, id);
    this.fresh.push({ t: 'i', path: '' });
    this.fresh[id - this.base] = this.newNode(v);
    return { r: id };
  }

  private key(k: PropertyKey): Key {
    return typeof k === 'symbol' ? (this.encode(k) as { r: number }) : String(k);
  }

  private newNode(v: unknown): GraphNode {
    if (typeof v === 'function') throw new TypeError('a task cannot return or store a function it created (its code cannot travel back)');
    if (typeof v === 'symbol') return v.description !== undefined ? { t: 'y', d: v.description } : { t: 'y' };
    const o = v as object;
    if (Array.isArray(o)) return { t: 'a', v: Array.from(o, (x, i) => (i in o ? this.encode(x) : { h: 1 as const })) };
    if (ArrayBuffer.isView(o) && !(o instanceof DataView)) return { t: 'ta', c: o.constructor.name, b: bytesToBase64(new Uint8Array(o.buffer, o.byteOffset, o.byteLength)) };
    if (o instanceof ArrayBuffer) return { t: 'ab', b: bytesToBase64(new Uint8Array(o)) };
    if (o instanceof Map) return { t: 'm', e: [...o].map(([k, x]) => [this.encode(k), this.encode(x)] as [Val, Val]) };
    if (o instanceof Set) return { t: 's', e: [...o].map((x) => this.encode(x)) };
    if (o instanceof Date) return { t: 'd', v: o.getTime() };
    if (o instanceof RegExp) return { t: 're', s: o.source, f: o.flags };
    const node: Extract<GraphNode, { t: 'o' }> = { t: 'o', p: [] };
    const proto = Object.getPrototypeOf(o) as object | null;
    if (proto === null) node.np = 1;
    else if (proto !== Object.prototype) {
      const ctor = (proto as { constructor?: unknown }).constructor;
      const known = this.ids.get(ctor);
      if (known !== undefined) node.cls = { r: known };
    }
    for (const k of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, k)!;
      if ('value' in d) node.p.push([this.key(k), this.encode(d.value)]);
    }
    return node;
  }

  /** Every write the task made to objects of the snapshot. */
  writes(): Write[] {
    const out: Write[] = [];
    for (const [id, v] of this.built) {
      const node = this.nodeAt(id) as GraphNode;
      switch (node.t) {
        case 'o': this.objectWrites(id, v as object, node.p, out); break;
        // A function's own properties: a class's static fields, `fn.count = 7`.
        case 'f': this.objectWrites(id, v as object, node.p ?? [], out, FUNCTION_OWN_KEYS); break;
        case 'a': this.arrayWrites(id, v as unknown[], node.v ?? [], out); break;
        case 'ta': this.typedWrites(id, v as ArrayBufferView, out); break;
        case 'm': this.mapWrites(id, v as Map<unknown, unknown>, node.e, out); break;
        case 's': this.setWrites(id, v as Set<unknown>, node.e, out); break;
        case 'd': if ((v as Date).getTime() !== node.v) out.push({ id, date: (v as Date).getTime() }); break;
        default: break;
      }
    }
    return out;
  }

  private objectWrites(id: number, o: object, before: [Key, Val][], out: Write[], skip?: ReadonlySet<PropertyKey>): void {
    const old = new Map<string, Val>();
    for (const [k, x] of before) old.set(typeof k === 'string' ? k : `@${k.r}`, x);
    for (const k of Reflect.ownKeys(o)) {
      if (skip?.has(k)) continue;
      const d = Object.getOwnPropertyDescriptor(o, k)!;
      if (!('value' in d)) continue;
      const key = this.key(k);
      const name = typeof key === 'string' ? key : `@${key.r}`;
      const prev = old.get(name);
      old.delete(name);
      if (samePrimitive(d.value, prev)) continue;
      const now = this.encode(d.value);
      if (prev === undefined || !sameVal(prev, now)) out.push({ id, k: key, v: now });
    }
    for (const [name] of old) out.push({ id, k: name.startsWith('@') ? { r: Number(name.slice(1)) } : name, del: 1 });
  }

  private arrayWrites(id: number, a: unknown[], before: Val[], out: Write[]): void {
    if (a.length !== before.length) out.push({ id, len: a.length });
    for (let i = 0; i < a.length; i++) {
      const prev = before[i];
      if (samePrimitive(a[i], prev)) continue; // most elements of a large array: no encoding
      const now: Val = i in a ? this.encode(a[i]) : { h: 1 };
      if (prev === undefined || !sameVal(prev, now)) out.push({ id, k: String(i), v: now });
    }
  }

  /**
   * Typed arrays element-wise: 32-bit words are compared first (most of a large array is usually
   * unchanged), and only inside a differing word are elements compared one by one, so a run holds
   * exactly the changed elements (neighbours written by another task are not claimed).
   */
  private typedWrites(id: number, t: ArrayBufferView, out: Write[]): void {
    const snap = this.snapshotBytes.get(id)!;
    const now = new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
    const size = (t as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    const n = now.length / size;
    const runs: [number, number][] = []; // [first element, count]
    let checked = 0; // elements below this were compared already
    const element = (e: number) => {
      if (e < checked) return;
      checked = e + 1;
      for (let b = e * size; b < (e + 1) * size; b++) {
        if (now[b] === snap[b]) continue;
        const last = runs[runs.length - 1];
        if (last && last[0] + last[1] === e) last[1]++;
        else runs.push([e, 1]);
        return;
      }
    };
    const aligned = t.byteOffset % 4 === 0 && snap.byteOffset % 4 === 0;
    if (aligned) {
      const words = Math.floor(now.length / 4);
      const a = new Uint32Array(t.buffer, t.byteOffset, words);
      const b = new Uint32Array(snap.buffer, snap.byteOffset, words);
      for (let w = 0; w < words; w++) {
        if (a[w] === b[w]) continue;
        for (let e = Math.floor((w * 4) / size); e * size < (w + 1) * 4 && e < n; e++) element(e);
      }
      for (let e = Math.floor((words * 4) / size); e < n; e++) element(e); // the bytes after the last whole word
    } else {
      for (let e = 0; e < n; e++) element(e);
    }
    if (runs.length > 0) out.push({ id, ta: runs.map(([first, count]) => [first, bytesToBase64(now.subarray(first * size, (first + count) * size))]) });
    // Back to the snapshot (the runs hold every changed element), for the next task to reuse.
    if (now.length === snap.length) {
      for (const [first, count] of runs) now.set(snap.subarray(first * size, (first + count) * size), first * size);
      this.spareTyped.set(id, t);
    }
  }

  private mapWrites(id: number, m: Map<unknown, unknown>, before: [Val, Val][], out: Write[]): void {
    const old = new Map<string, Val>(before.map(([k, x]) => [JSON.stringify(k), x]));
    const mset: [Val, Val][] = [];
    for (const [k, x] of m) {
      const ek = this.encode(k);
      const name = JSON.stringify(ek);
      const prev = old.get(name);
      old.delete(name);
      const now = this.encode(x);
      if (prev === undefined || !sameVal(prev, now)) mset.push([ek, now]);
    }
    const mdel = [...old.keys()].map((name) => JSON.parse(name) as Val);
    if (mset.length + mdel.length > 0) out.push({ id, mset, mdel });
  }

  private setWrites(id: number, s: Set<unknown>, before: Val[], out: Write[]): void {
    const old = new Set(before.map((x) => JSON.stringify(x)));
    const sadd: Val[] = [];
    for (const x of s) {
      const name = JSON.stringify(this.encode(x));
      if (!old.delete(name)) sadd.push(JSON.parse(name) as Val);
    }
    const sdel = [...old].map((name) => JSON.parse(name) as Val);
    if (sadd.length + sdel.length > 0) out.push({ id, sadd, sdel });
  }
}

