/**
 * Capture (seed 002 §3.2): turns closures into a graph of code and data that can run elsewhere.
 * A closure's free variables (acorn) are looked up in its `[[Scopes]]` (inspector); functions it
 * reaches are captured the same way, transitively; objects become nodes with identity. A function
 * of an installed package becomes a reference to its module's export (resolved by
 * `resolvePackages`), so the package travels by reference or as a bundle, not as loose source.
 * What cannot run remotely is refused here, naming the variable and the file:line of its use.
 */
import path from 'node:path';
import { freeVariables } from './free-variables.js';
import { intrinsicTable, refusedIntrinsic, REFUSED_GLOBALS, SAFE_GLOBALS } from './intrinsics.js';
import { ModuleScopeCache, prefetchHandles, releaseHandles, scriptFile, scriptIsStrict, scriptPath, sourcePosition, viewClosure, type FunctionLocation } from './inspector-scopes.js';
import { FUNCTION_OWN_KEYS, bytesToBase64, encodePrimitive, type AnyFunction, type CaptureGraph, type Code, type GraphNode, type Key, type SharedSegment, type Val } from './graph-format.js';
import { exportPath, installedPackageOf, type InstalledPackage } from './package-refs.js';
import { BLOB_MIN_BYTES, ContentBlobs, type ContentBlob } from './content-blobs.js';
import { SharedValue } from './shared-value.js';

export class CaptureError extends Error {
  constructor(readonly variable: string, readonly at: string, readonly reason: string) {
    super(`cannot distribute \`${variable}\` (${at}): ${reason}`);
    this.name = 'CaptureError';
  }
}

/**
 * Objects of tidepool's client that a task cannot use (Distribution, DistributedTask, their classes): a
 * nested Distribution is refused where the program's closure reaches it, naming the program's line.
 */
export const CLIENT_ONLY = new WeakSet<object>();

function isClientOnly(v: unknown): boolean {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return false;
  return CLIENT_ONLY.has(v) || (typeof v === 'object' && CLIENT_ONLY.has(Object.getPrototypeOf(v) as object));
}

export interface CaptureOptions {
  /** Warn above this many bytes of captured data (default 10 MB). */
  warnBytes?: number;
  /** Refuse above this many bytes (default 256 MB). */
  maxBytes?: number;
  onWarning?: (message: string) => void;
}

/** Where the value being captured was reached from: the variable, its use's file:line (computed only for an error). */
interface Origin { path: string; at: () => string }

const PLAIN_PROTOS = new Set<unknown>([Object.prototype]);
/** Inspector handles are released every this many tasks (one release per task would cost as much as the capture). */
const RELEASE_EVERY = 256;
const hostFiles = new Map<string, string | undefined>();
const packageFiles = new Map<string, { pkg: InstalledPackage; file: string } | undefined>();

/** A package function met during capture, waiting for its export path. */
interface PendingExport { node: Extract<GraphNode, { t: 'pk' }>; fn: AnyFunction; pkg: InstalledPackage; file: string; origin: Origin }

/** A capture of one batch: every task's closure in one graph, so shared data travels once. */
export class Capture {
  readonly graph: CaptureGraph = { codes: [], nodes: [], tasks: [] };
  /** The blobs the graph names (bulk data, shared values), by hash. */
  readonly blobs = new Map<string, Uint8Array>();
  /** The client's objects by node id (where changes are applied). */
  readonly objects: unknown[] = [];
  /** A readable path per node (`outputs`, `config.items`), for conflict messages. */
  readonly names: string[] = [];
  /** Where each code is on the client (to map sandbox stacks back to client lines). */
  readonly locations: (FunctionLocation | undefined)[] = [];
  private readonly ids = new Map<unknown, number>();
  private readonly codeIds = new Map<string, number>();
  /** Per package of the graph: its directory on this machine and where the first of its functions was reached. */
  readonly packageSources: { root: string; origin: { path: string; at: () => string } }[] = [];
  private pending: PendingExport[] = [];
  private readonly modules = new ModuleScopeCache();
  /** Objects captured with some of their properties only (node id → keys included), see `value`. */
  private readonly partial = new Map<number, Set<string>>();
  private bytes = 0;
  private readonly warnBytes: number;
  private readonly maxBytes: number;
  private warned = false;

  constructor(private readonly opts: CaptureOptions = {}, private readonly content = new ContentBlobs(), private readonly dataOnly = false) {
    this.warnBytes = opts.warnBytes ?? 10e6;
    this.maxBytes = opts.maxBytes ?? 256e6;
  }

  /**
   * Captures a value for `distribution.put`: data only, as its own segment (node 0 is the value); the
   * segment's JSON is a blob too, whose hash names the value.
   */
  static shared<T>(value: T, name: string, opts: CaptureOptions = {}, content = new ContentBlobs()): SharedValue<T> {
    const cap = new Capture(opts, content, true);
    cap.value(value, { path: name, at: () => 'distribution.put' });
    const segment: SharedSegment = { nodes: cap.graph.nodes, names: cap.names };
    if (cap.blobs.size > 0) segment.blobs = Object.fromEntries([...cap.blobs].map(([h, b]) => [h, b.length]));
    const blob = content.ofText({}, JSON.stringify(segment)); // hashed afresh: put once per value
    return new SharedValue(value, blob, [...cap.blobs].map(([hash, bytes]) => ({ hash, bytes })));
  }

  /** Adds a blob the graph names. */
  private blob(blob: ContentBlob, origin: Origin): string {
    if (!this.blobs.has(blob.hash)) {
      this.grow(blob.bytes.length, origin);
      this.blobs.set(blob.hash, blob.bytes);
      (this.graph.blobs ??= {})[blob.hash] = blob.bytes.length;
    }
    return blob.hash;
  }

  /** Adds a task: a closure and the arguments it is called with. Returns the task's index. */
  addTask(fn: AnyFunction, args: unknown[] = [], label?: string): number {
    if (typeof fn !== 'function') throw new TypeError('a task must be a function');
    const origin: Origin = { path: label ?? `task ${this.graph.tasks.length}`, at: () => 'task' };
    try {
      const ref = this.value(fn, origin);
      const f = (ref as { r: number }).r;
      const spec: CaptureGraph['tasks'][number] = { f };
      if (args.length > 0) spec.a = args.map((a, i) => this.value(a, { path: `argument ${i}`, at: origin.at }));
      if (label) spec.label = label;
      this.graph.tasks.push(spec);
      return this.graph.tasks.length - 1;
    } finally {
      // Handles are freed in groups: one release per task would cost as much as the capture.
      if (this.graph.tasks.length % RELEASE_EVERY === 0) releaseHandles(this.modules);
    }
  }

  /**
   * Finds the export path of every package function captured so far. One that its module does not
   * export (a package's internal helper) is captured from its source instead, like the application's.
   */
  async resolvePackages(): Promise<void> {
    while (this.pending.length > 0) {
      for (const p of this.pending.splice(0)) {
        const where = await exportPath(p.file, p.fn);
        if (where) {
          const [k, f] = this.packageFile(p.pkg, p.file, p.origin);
          Object.assign(p.node, { k, f, p: where });
        } else {
          this.graph.nodes[this.ids.get(p.fn)!] = this.fn(p.fn, p.origin, false);
        }
      }
    }
  }

  /** Adds many tasks (closures without arguments): their handles are fetched in groups. */
  addTasks(tasks: readonly { fn: AnyFunction; label?: string }[]): void {
    for (let from = 0; from < tasks.length;) {
      // Up to the next release in addTask, so that no prefetched handle is released before its use.
      const group = tasks.slice(from, from + RELEASE_EVERY - (this.graph.tasks.length % RELEASE_EVERY));
      prefetchHandles(group.map((t) => t.fn));
      for (const t of group) this.addTask(t.fn, [], t.label);
      from += group.length;
    }
  }

  /** Frees the inspector handles still held (call once the batch is captured and its packages resolved). */
  done(): void {
    releaseHandles(this.modules);
    if (this.pending.length > 0) throw new Error('the capture reached package functions: call resolvePackages() before done()');
  }

  private packageFile(pkg: InstalledPackage, file: string, origin: Origin): [number, number] {
    const packages = (this.graph.packages ??= []);
    let k = this.packageSources.findIndex((s) => s.root === pkg.root);
    if (k < 0) {
      k = packages.push({ name: pkg.name, version: pkg.version, files: [] }) - 1;
      this.packageSources.push({ root: pkg.root, origin });
    }
    const files = packages[k]!.files;
    const rel = path.relative(pkg.root, file).split(path.sep).join('/');
    const f = files.indexOf(rel);
    return [k, f >= 0 ? f : files.push(rel) - 1];
  }

  /** Approximate size of the captured data so far (bytes of JSON). */
  get size(): number {
    return this.bytes;
  }

  private grow(n: number, origin: Origin): void {
    this.bytes += n;
    if (this.bytes > this.maxBytes) throw new CaptureError(origin.path, origin.at(), `the capture exceeds its maximum of ${this.maxBytes} bytes (raise maxCaptureBytes)`);
    if (!this.warned && this.bytes > this.warnBytes) {
      this.warned = true;
      const msg = `tidepool service: captured data exceeds ${Math.round(this.warnBytes / 1e6)} MB (at \`${origin.path}\`, ${origin.at()}); it is sent with every batch`;
      if (this.opts.onWarning) this.opts.onWarning(msg);
      else process.emitWarning(msg, 'CaptureSizeWarning');
    }
  }

  /**
   * Captures a value. `keys`: the closure reads only these properties of it (`v.a`, `v.b`): a plain object
   * or class instance then travels with those own properties only (see `prunable`); reached again in full
   * (or for other keys), its node is completed.
   */
  private value(v: unknown, origin: Origin, keys?: ReadonlySet<string>): Val {
    const prim = encodePrimitive(v);
    if (prim !== undefined) {
      if (typeof prim === 'string') this.grow(prim.length + 2, origin);
      return prim;
    }
    const known = this.ids.get(v);
    if (known !== undefined) {
      const included = this.partial.get(known);
      if (included) this.widen(known, v as object, included, keys, origin);
      return { r: known };
    }
    const id = this.graph.nodes.length;
    this.ids.set(v, id);
    this.objects.push(v);
    this.names.push(origin.path);
    this.graph.nodes.push({ t: 'i', path: '' }); // placeholder until filled (cycles see the id)
    if (keys !== undefined && !(v instanceof SharedValue) && !isClientOnly(v) && prunable(v, keys)) {
      this.partial.set(id, new Set(keys));
      this.graph.nodes[id] = this.object(v as object, Object.getPrototypeOf(v) as object | null, origin, keys);
    } else {
      this.graph.nodes[id] = this.node(v, origin);
    }
    this.grow(16, origin);
    return { r: id };
  }

  /** Completes a pruned object's node: with the keys asked for now, or in full (its properties in their own order). */
  private widen(id: number, o: object, included: Set<string>, keys: ReadonlySet<string> | undefined, origin: Origin): void {
    const narrow = keys !== undefined && prunable(o, keys);
    if (narrow && [...keys].every((k) => included.has(k))) return;
    const more = narrow ? new Set([...included, ...keys]) : undefined;
    if (more) this.partial.set(id, more);
    else this.partial.delete(id);
    const node = this.graph.nodes[id] as Extract<GraphNode, { t: 'o' }>;
    const rebuilt = this.object(o, Object.getPrototypeOf(o) as object | null, { path: this.names[id]!, at: origin.at }, more);
    node.p = rebuilt.p;
    if (rebuilt.acc) node.acc = rebuilt.acc;
  }

  private node(v: unknown, origin: Origin): GraphNode {
    const intrinsic = intrinsicTable().get(v);
    if (intrinsic !== undefined) {
      const refused = refusedIntrinsic(intrinsic);
      if (refused) throw new CaptureError(origin.path, origin.at(), `${refused} cannot run remotely`);
      return { t: 'i', path: intrinsic };
    }
    if (typeof v === 'symbol') {
      const g = Symbol.keyFor(v);
      return g !== undefined ? { t: 'y', g } : v.description !== undefined ? { t: 'y', d: v.description } : { t: 'y' };
    }
    if (isClientOnly(v)) {
      throw new CaptureError(origin.path, origin.at(), `a ${typeof v === 'function' ? (v as AnyFunction).name : (Object.getPrototypeOf(v) as { constructor: AnyFunction }).constructor.name} is this program's connection to its workers and cannot be used inside a task (a task cannot start tasks): start that work from the program, after this batch`);
    }
    if (v instanceof SharedValue) {
      this.blob(v.segment, origin);
      for (const b of v.blobs) this.blob(b, origin);
      return { t: 'sh', h: v.hash };
    }
    if (typeof v === 'function') {
      if (this.dataOnly) throw new CaptureError(origin.path, origin.at(), 'a value shared with distribution.put holds data only (functions and classes travel with the closures of tasks)');
      return this.fn(v as AnyFunction, origin);
    }
    const o = v as object;
    if (o === globalThis || o === process) throw new CaptureError(origin.path, origin.at(), 'host access (the global object or process) cannot run remotely');
    if (Array.isArray(o)) {
      const out: Val[] = new Array(o.length);
      for (let i = 0; i < o.length; i++) {
        if (!(i in o)) {
          out[i] = { h: 1 };
          continue;
        }
        const x: unknown = o[i];
        // Numbers and booleans need no origin (large numeric arrays are common): skip building one.
        out[i] = typeof x === 'number' || typeof x === 'boolean' ? encodePrimitive(x)! : this.value(x, { path: `${origin.path}[${i}]`, at: origin.at });
      }
      // Elements that are all primitives (no references to other nodes), large enough: a blob of their JSON.
      if (out.length * 2 >= BLOB_MIN_BYTES && out.every((x) => typeof x !== 'object' || x === null || !('r' in x))) {
        const text = JSON.stringify(out);
        if (text.length >= BLOB_MIN_BYTES) return { t: 'a', h: this.blob(this.content.ofText(o, text), origin) };
      }
      return { t: 'a', v: out };
    }
    if (ArrayBuffer.isView(o)) {
      if (o instanceof DataView) throw new CaptureError(origin.path, origin.at(), 'a DataView cannot be captured (capture the typed array or ArrayBuffer)');
      if (o.buffer instanceof SharedArrayBuffer) throw new CaptureError(origin.path, origin.at(), 'shared memory (SharedArrayBuffer) means synchronization and cannot run remotely');
      const bytes = new Uint8Array(o.buffer, o.byteOffset, o.byteLength);
      if (bytes.length >= BLOB_MIN_BYTES) return { t: 'ta', c: o.constructor.name, h: this.blob(this.content.ofBytes(o, bytes), origin) };
      this.grow(Math.ceil(o.byteLength / 3) * 4, origin);
      return { t: 'ta', c: o.constructor.name, b: bytesToBase64(bytes) };
    }
    if (o instanceof ArrayBuffer) {
      const bytes = new Uint8Array(o);
      if (bytes.length >= BLOB_MIN_BYTES) return { t: 'ab', h: this.blob(this.content.ofBytes(o, bytes), origin) };
      this.grow(Math.ceil(o.byteLength / 3) * 4, origin);
      return { t: 'ab', b: bytesToBase64(bytes) };
    }
    if (o instanceof SharedArrayBuffer) throw new CaptureError(origin.path, origin.at(), 'shared memory (SharedArrayBuffer) means synchronization and cannot run remotely');
    const proto = Object.getPrototypeOf(o) as object | null;
    if (proto === Map.prototype) {
      const e: [Val, Val][] = [];
      for (const [k, val] of o as Map<unknown, unknown>) e.push([this.value(k, { path: `${origin.path} key`, at: origin.at }), this.value(val, { path: `${origin.path}.get(…)`, at: origin.at })]);
      return { t: 'm', e };
    }
    if (proto === Set.prototype) return { t: 's', e: [...(o as Set<unknown>)].map((x) => this.value(x, { path: `${origin.path} member`, at: origin.at })) };
    if (proto === Date.prototype) return { t: 'd', v: (o as Date).getTime() };
    if (proto === RegExp.prototype) return { t: 're', s: (o as RegExp).source, f: (o as RegExp).flags };
    if (o instanceof Promise || o instanceof WeakMap || o instanceof WeakSet || o instanceof WeakRef) {
      throw new CaptureError(origin.path, origin.at(), `a ${o.constructor.name} cannot be captured (its contents cannot be read without running code)`);
    }
    if (proto !== null && ([Number.prototype, String.prototype, Boolean.prototype] as object[]).includes(proto)) throw new CaptureError(origin.path, origin.at(), 'boxed primitives cannot be captured');
    return this.object(o, proto, origin);
  }

  private object(o: object, proto: object | null, origin: Origin, keys?: ReadonlySet<string>): Extract<GraphNode, { t: 'o' }> {
    const node: Extract<GraphNode, { t: 'o' }> = { t: 'o', p: [] };
    if (proto === null) node.np = 1;
    else if (!PLAIN_PROTOS.has(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, 'constructor');
      const ctor = d && 'value' in d ? (d.value as unknown) : undefined;
      if (typeof ctor !== 'function' || (ctor as { prototype?: unknown }).prototype !== proto) {
        throw new CaptureError(origin.path, origin.at(), 'an object whose prototype is not the prototype of its class cannot be captured');
      }
      node.cls = this.value(ctor, { path: `${origin.path}.constructor`, at: origin.at });
      // Its class and the classes it extends: private members cannot be read, nor added without the constructor.
      for (let p: object | null = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
        const c = Object.getOwnPropertyDescriptor(p, 'constructor')?.value as unknown;
        if (typeof c !== 'function' || intrinsicTable().has(c)) continue;
        const privates = freeVariables(Function.prototype.toString.call(c)).privates.filter((m) => !m.isStatic);
        if (privates.length > 0) {
          throw new CaptureError(origin.path, origin.at(), `an instance of class ${(ctor as AnyFunction).name || '(anonymous)'} cannot be captured: ${c === ctor ? 'it has' : `its base class ${c.name} has`} private members (${privates.map((m) => m.name).join(', ')}), which cannot be read, and a copy made without running its constructor would lack them`);
        }
      }
    }
    for (const key of Reflect.ownKeys(o)) {
      if (keys !== undefined && (typeof key !== 'string' || !keys.has(key))) continue;
      const d = Object.getOwnPropertyDescriptor(o, key)!;
      const k = this.key(key, origin);
      const path = typeof key === 'string' ? `${origin.path}.${key}` : `${origin.path}[${String(key)}]`;
      if ('value' in d) node.p.push([k, this.value(d.value, { path, at: origin.at })]);
      else (node.acc ??= []).push([k, this.value(d.get, { path: `get ${path}`, at: origin.at }), this.value(d.set, { path: `set ${path}`, at: origin.at })]); // never called here
    }
    return node;
  }

  private key(key: string | symbol, origin: Origin): Key {
    if (typeof key === 'string') {
      this.grow(key.length + 3, origin);
      return key;
    }
    return this.value(key, origin) as { r: number };
  }

  /**
   * A closure writes through a free name (`Math.x = …`, `Counter.prototype.y = …`): refused where the write
   * could not come back — a built-in (every sandbox has its own), a class's prototype (a class travels as
   * source, its prototype is made anew), a package's export (its module lives per sandbox).
   */
  private checkWriteThrough(name: string, keys: string[], found: { found: true; value: unknown } | { found: false }, at: () => string): void {
    const written = `${name}${keys.map((k) => (k === '*' ? '[…]' : `.${k}`)).join('')}`;
    const refuse = (why: string) => {
      throw new CaptureError(name, at(), `a task cannot write to ${written}: ${why}, so the write could not come back`);
    };
    if (!found.found) {
      if (SAFE_GLOBALS.has(name)) refuse(`\`${name}\` is a built-in, of which every sandbox has its own`);
      return;
    }
    const v = found.value;
    const intrinsic = intrinsicTable().get(v);
    if (intrinsic !== undefined) refuse(`\`${name}\` is the built-in ${intrinsic}, of which every sandbox has its own`);
    if (typeof v === 'function' && keys[0] === 'prototype') refuse(`the prototype of ${v.name || 'a class'} is made anew remotely from its source`);
    if (typeof v === 'function' && this.isPackageFunction(v as AnyFunction)) refuse(`${v.name || name} belongs to an installed package, whose module state is its own in every sandbox`);
  }

  private isPackageFunction(fn: AnyFunction): boolean {
    const view = viewClosure(fn, this.modules);
    return view.location !== undefined && packageFileOf(view.location.scriptId) !== undefined;
  }

  private fn(fn: AnyFunction, origin: Origin, asPackageExport = true): GraphNode {
    const src = Function.prototype.toString.call(fn);
    const view = viewClosure(fn, this.modules);
    if (/\{\s*\[native code\]\s*\}$/.test(src)) {
      throw new CaptureError(origin.path, origin.at(), view.bound ? 'a bound function cannot be captured (use an arrow function instead of .bind)' : `native function ${fn.name || '(anonymous)'} cannot run remotely`);
    }
    const file = view.location ? hostFile(view.location.scriptId) : undefined;
    if (file?.startsWith('node:')) throw new CaptureError(origin.path, origin.at(), `${fn.name || 'a function'} is part of Node.js (${file}): I/O and host functions cannot run remotely`);
    const installed = asPackageExport && view.location ? packageFileOf(view.location.scriptId) : undefined;
    if (installed) {
      const node: Extract<GraphNode, { t: 'pk' }> = { t: 'pk', k: -1, f: -1, p: [] }; // filled by resolvePackages
      this.pending.push({ node, fn, ...installed, origin });
      return node;
    }
    const fv = freeVariables(src);
    const here = (offset: number) => () => sourcePosition(view.location, src, offset);
    if (fv.lexicalThis !== undefined) throw new CaptureError('this', here(fv.lexicalThis)(), 'an arrow function that uses `this` of its surrounding code cannot be captured');
    for (const [name, at] of fv.assigned) {
      if (view.lookup(name).found) throw new CaptureError(name, here(at)(), 'a task cannot assign a captured variable (its new value could not come back); write to an object field or array element instead');
    }
    const privateStatic = fv.privates.find((p) => p.isStatic && p.field);
    if (privateStatic) {
      throw new CaptureError(fn.name || origin.path, here(privateStatic.at)(), `class ${fn.name || '(anonymous)'} has a static private field ${privateStatic.name}: its value cannot be read, so it would restart from its initializer remotely and its writes could not come back (make it a static field without #)`);
    }
    for (const [name, { at, path: keys }] of fv.writesThrough) this.checkWriteThrough(name, keys, view.lookup(name), here(at));
    const envNames: string[] = [];
    const globals: string[] = [];
    const env: Val[] = [];
    for (const [name, at] of fv.free) {
      const found = view.lookup(name);
      if (found.found) {
        envNames.push(name);
        const keys = fv.members.get(name);
        env.push(this.value(found.value, { path: name, at: here(at) }, keys === 'whole' ? undefined : keys));
        continue;
      }
      const refused = REFUSED_GLOBALS.get(name) ?? (name === 'Function' ? 'dynamic code (Function)' : undefined);
      if (refused) throw new CaptureError(name, here(at)(), `${refused} cannot run remotely`);
      if (SAFE_GLOBALS.has(name)) {
        if (/^[A-Z]/.test(name)) globals.push(name); // Math, Uint8Array…: not undefined, NaN, parseInt
        continue;
      }
      if (name === 'arguments') throw new CaptureError(name, here(at)(), 'an arrow function that uses `arguments` of its surrounding code cannot be captured');
      if (name in globalThis) throw new CaptureError(name, here(at)(), `the host global \`${name}\` does not exist in the sandbox`);
      throw new CaptureError(name, here(at)(), 'undeclared global variable (not defined in any scope of the closure)');
    }
    const codeKey = `${envNames.join(',')}\u0000${src}`;
    let c = this.codeIds.get(codeKey);
    if (c === undefined) {
      c = this.graph.codes.length;
      const code: Code = { src, env: envNames, form: fv.form };
      if (globals.length > 0) code.g = globals;
      if (fv.strict || (view.location !== undefined && scriptIsStrict(view.location.scriptId))) code.strict = 1;
      if (view.location) code.at = sourcePosition(view.location, src, 0);
      this.graph.codes.push(code);
      this.locations.push(view.location);
      this.codeIds.set(codeKey, c);
      this.grow(src.length, origin);
    }
    const node: Extract<GraphNode, { t: 'f' }> = { t: 'f', c, env };
    for (const key of Reflect.ownKeys(fn)) {
      if (FUNCTION_OWN_KEYS.has(key)) continue;
      const d = Object.getOwnPropertyDescriptor(fn, key)!;
      if (!('value' in d)) continue;
      (node.p ??= []).push([this.key(key, origin), this.value(d.value, { path: `${origin.path}.${String(key)}`, at: origin.at })]);
    }
    return node;
  }
}

/** The installed package and module file a script is, cached by script id. */
function packageFileOf(scriptId: string): { pkg: InstalledPackage; file: string } | undefined {
  if (!packageFiles.has(scriptId)) {
    const file = scriptPath(scriptId);
    const pkg = file !== undefined ? installedPackageOf(file) : undefined;
    packageFiles.set(scriptId, pkg && file ? { pkg, file } : undefined);
  }
  return packageFiles.get(scriptId);
}

/** The file of a script, cached; Node's own modules are `node:…`. */
function hostFile(scriptId: string): string | undefined {
  if (!hostFiles.has(scriptId)) hostFiles.set(scriptId, scriptFile(scriptId));
  return hostFiles.get(scriptId);
}

/**
 * Whether capturing only `keys` of `v` is sound: `v` is a plain object or class instance (not an array,
 * function or collection), and reading those keys runs no code — no own accessor, and no accessor on its
 * prototype chain, for any of them (a getter could read any other property through `this`).
 */
function prunable(v: unknown, keys: ReadonlySet<string>): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto === Map.prototype || proto === Set.prototype || proto === Date.prototype || proto === RegExp.prototype) return false;
  for (const key of keys) {
    for (let o: object | null = v; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
      const d = Object.getOwnPropertyDescriptor(o, key);
      if (d && !('value' in d)) return false;
    }
  }
  return true;
}
