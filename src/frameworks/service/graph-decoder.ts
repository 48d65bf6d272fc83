/**
 * Rebuilds values of a captured graph: in the sandbox (every node reachable from a task, afresh
 * per task) and on the client (the new objects a task created, around the client's own objects).
 * Every key is defined as an own data property, so no key reaches a prototype.
 */
import { PACKAGES_GLOBAL, TYPED_ARRAYS, base64ToBytes, decodePrimitive, isRef, type AnyFunction, type GraphNode, type Key, type Val } from './graph-format.js';
import { resolveIntrinsic } from './intrinsics.js';

/** A factory per code: fresh bindings, returned as [set the bindings, evaluate the function's source]. */
export type Factory = () => [(values: unknown[]) => void, () => AnyFunction];

export interface DecoderOptions {
  factories?: Factory[];
  /** A typed array's or ArrayBuffer's bytes (inline base64 `b`, or the blob `h`); the decoder copies them. */
  bytesOf?: (id: number, node: { b?: string; h?: string }) => Uint8Array;
  /** A typed array equal to node `id`'s snapshot that may be used instead of a fresh copy, if any. */
  spareTyped?: (id: number) => unknown;
  /** The value of a `distribution.put` segment (`sh` node), by its hash. */
  shared?: (hash: string) => unknown;
}

export class GraphDecoder {
  /** Every node rebuilt so far, by id (what a task could reach). */
  readonly built = new Map<number, unknown>();
  /** Functions whose bindings are being decoded: a cycle back to one creates it early. */
  private readonly pending = new Map<number, () => unknown>();

  private readonly factories: Factory[];
  private readonly bytesOf: (id: number, node: { b?: string; h?: string }) => Uint8Array;
  private readonly spareTyped: (id: number) => unknown;
  private readonly shared: (hash: string) => unknown;

  constructor(
    /** The node of an id; an array node whose elements are a blob must come materialized (`v`). */
    private readonly nodeAt: (id: number) => GraphNode | undefined,
    private readonly global: Record<string, unknown>,
    opts: DecoderOptions = {},
  ) {
    this.factories = opts.factories ?? [];
    this.bytesOf = opts.bytesOf ?? ((id, node) => {
      if (node.b === undefined) throw new Error(`node ${id}: its bytes are a blob this side does not have`);
      return base64ToBytes(node.b);
    });
    this.spareTyped = opts.spareTyped ?? (() => undefined);
    this.shared = opts.shared ?? ((hash) => { throw new Error(`a value shared with distribution.put (${hash.slice(0, 12)}) cannot be rebuilt here`); });
  }

  /** Seeds a node with an existing value (the client's own objects). */
  preset(id: number, value: unknown): void {
    this.built.set(id, value);
  }

  key(k: Key): PropertyKey {
    return typeof k === 'string' ? k : (this.decode(k) as symbol);
  }

  decode(v: Val): unknown {
    if (!isRef(v)) return decodePrimitive(v);
    const id = v.r;
    if (this.built.has(id)) return this.built.get(id);
    const early = this.pending.get(id);
    if (early) return early();
    const node = this.nodeAt(id);
    if (!node) throw new Error(`the graph has no node ${id}`);
    const keep = <T>(x: T): T => {
      this.built.set(id, x);
      return x;
    };
    switch (node.t) {
      case 'i': return keep(resolveIntrinsic(node.path, this.global));
      case 'pk': return keep(this.packageExport(node));
      case 'y': return keep(node.g !== undefined ? Symbol.for(node.g) : Symbol(node.d));
      case 'd': return keep(new Date(node.v));
      case 're': return keep(new RegExp(node.s, node.f));
      case 'ab': return keep(this.bytesOf(id, node).slice().buffer);
      case 'sh': return keep(this.shared(node.h));
      case 'ta': {
        const spare = this.spareTyped(id);
        if (spare !== undefined) return keep(spare);
        if (!(TYPED_ARRAYS as readonly string[]).includes(node.c)) throw new TypeError(`unknown typed array ${node.c}`);
        const C = this.global[node.c] as new (b: ArrayBuffer) => unknown;
        return keep(new C(this.bytesOf(id, node).slice().buffer));
      }
      case 'a': {
        if (node.v === undefined) throw new Error(`node ${id}: its elements are a blob not materialized here`);
        const a = keep(new Array(node.v.length) as unknown[]);
        node.v.forEach((x, i) => {
          if (!(typeof x === 'object' && x !== null && 'h' in x)) a[i] = this.decode(x);
        });
        return a;
      }
      case 'm': {
        const m = keep(new Map());
        for (const [k, x] of node.e) m.set(this.decode(k), this.decode(x));
        return m;
      }
      case 's': {
        const s = keep(new Set());
        for (const x of node.e) s.add(this.decode(x));
        return s;
      }
      case 'f': {
        const factory = this.factories[node.c];
        if (!factory) throw new Error(`no code ${node.c} for a function`);
        const [setEnv, make] = factory();
        let fn: AnyFunction | undefined;
        this.pending.set(id, () => (fn ??= keep(make())));
        const values = node.env.map((x) => this.decode(x));
        this.pending.delete(id);
        setEnv(values);
        fn ??= keep(make());
        for (const [k, x] of node.p ?? []) defineValue(fn, this.key(k), this.decode(x));
        return fn;
      }
      case 'o': {
        let proto: object | null = null;
        if (!node.np) proto = node.cls === undefined ? (this.global.Object as ObjectConstructor).prototype : (this.decode(node.cls) as { prototype: object }).prototype;
        const o = keep(Object.create(proto) as object);
        for (const [k, x] of node.p) defineValue(o, this.key(k), this.decode(x));
        for (const [k, g, s] of node.acc ?? []) {
          Object.defineProperty(o, this.key(k), { get: this.decode(g) as () => unknown, set: this.decode(s) as (x: unknown) => void, enumerable: true, configurable: true });
        }
        return o;
      }
    }
  }

  /** An export of an evaluated package bundle: `packages[k].f<f>` then the export path. */
  private packageExport(node: Extract<GraphNode, { t: 'pk' }>): unknown {
    const bundles = this.global[PACKAGES_GLOBAL] as unknown[] | undefined;
    let value = exportAt(bundles?.[node.k], `f${node.f}`);
    for (const key of node.p) value = exportAt(value, key);
    if (value === undefined) throw new ReferenceError(`package ${node.k} has no export ${[`f${node.f}`, ...node.p].join('.')} in this sandbox`);
    return value;
  }
}

/** An own property of an export (never a prototype's); esbuild's namespace objects export through getters of the bundle itself. */
function exportAt(owner: unknown, key: string): unknown {
  if ((typeof owner !== 'object' && typeof owner !== 'function') || owner === null || !Object.prototype.hasOwnProperty.call(owner, key)) return undefined;
  return (owner as Record<string, unknown>)[key];
}

function defineValue(o: object, key: PropertyKey, value: unknown): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
}
