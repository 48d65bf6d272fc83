/**
 * The client's side of seed 002 §3.3: applies the writes of a batch's tasks to the client's own
 * objects, in place, and detects write-write conflicts — two tasks of one batch writing the same
 * field, element, typed-array element, Map or Set entry. The first writer (in task order) keeps the
 * location; the later task fails with an error naming the location and both tasks.
 */
import type { Capture } from './capture.js';
import { GraphDecoder } from './graph-decoder.js';
import { FORBIDDEN_KEYS, TYPED_ARRAYS, base64ToBytes, type GraphNode, type Key, type TaskOutcome, type Write } from './graph-format.js';

export interface Conflict {
  location: string;
  /** The task that kept the location, and the later one. */
  tasks: [string, string];
}

/** Every write-write conflict of one task with earlier tasks of its batch. */
export class WriteConflictError extends Error {
  constructor(readonly conflicts: Conflict[]) {
    const [c] = conflicts;
    const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more location(s))` : '';
    super(`write-write conflict: ${c!.location} written by ${c!.tasks[0]} and ${c!.tasks[1]}${more}`);
    this.name = 'WriteConflictError';
  }
}

export class BatchApplier {
  private readonly writers = new Map<string, number>();
  private readonly elementWriters = new Map<number, Int32Array>();

  constructor(private readonly capture: Capture) {}

  private label(task: number): string {
    return this.capture.graph.tasks[task]?.label ?? `task ${task}`;
  }

  /**
   * Applies one task's outcome; returns its result value. Throws a WriteConflictError (after
   * applying what does not conflict) or an Error for a malformed or forbidden write.
   */
  apply(task: number, outcome: TaskOutcome): unknown {
    const base = outcome.base ?? this.capture.graph.nodes.length;
    if (base !== this.capture.graph.nodes.length) throw new Error(`task ${task}: its outcome is for another graph`);
    const fresh = outcome.n ?? [];
    const decoder = new GraphDecoder((id) => (id >= base ? fresh[id - base] : undefined), globalThis as unknown as Record<string, unknown>);
    const objects = this.capture.objects;
    const resolve = (v: Parameters<GraphDecoder['decode']>[0]) => {
      if (typeof v === 'object' && v !== null && 'r' in v && v.r < base) {
        if (v.r < 0 || v.r >= objects.length) throw new Error(`task ${task}: reference to unknown node ${v.r}`);
        decoder.preset(v.r, objects[v.r]);
      }
      return decoder.decode(v);
    };
    for (const node of fresh) presetRefs(node, base, objects, decoder);
    const conflicts: Conflict[] = [];
    const claim = (location: string): boolean => {
      const first = this.writers.get(location);
      if (first === undefined) {
        this.writers.set(location, task);
        return true;
      }
      if (first !== task) conflicts.push({ location, tasks: [this.label(first), this.label(task)] });
      return first === task;
    };
    for (const w of outcome.w ?? []) this.applyWrite(task, w, resolve, claim, (c) => conflicts.push(c));
    if (conflicts.length > 0) throw new WriteConflictError(conflicts);
    return outcome.v === undefined ? undefined : resolve(outcome.v);
  }

  private applyWrite(task: number, w: Write, resolve: (v: never) => unknown, claim: (loc: string) => boolean, onConflict: (c: Conflict) => void): void {
    const target = this.capture.objects[w.id] as Record<PropertyKey, unknown> | undefined;
    const node = this.capture.graph.nodes[w.id] as GraphNode | undefined;
    if (target === undefined || node === undefined) throw new Error(`task ${task}: write to unknown node ${w.id}`);
    const name = this.capture.names[w.id] ?? `node ${w.id}`;
    const r = resolve as (v: unknown) => unknown;
    if ('k' in w) {
      const key = keyOf(w.k, r);
      if (typeof key === 'string' && FORBIDDEN_KEYS.has(key)) throw new Error(`task ${task}: refused a write to key "${key}" of ${name}`);
      if (node.t !== 'o' && node.t !== 'a') throw new Error(`task ${task}: a field write to ${name}, which is not an object`);
      const loc = node.t === 'a' ? `${name}[${String(key)}]` : `${name}.${String(key)}`;
      if (!claim(loc)) return;
      if ('del' in w) delete target[key];
      else target[key] = r(w.v);
    } else if ('len' in w) {
      if (!Array.isArray(target)) throw new Error(`task ${task}: a length write to ${name}, which is not an array`);
      if (claim(`${name}.length`)) target.length = w.len;
    } else if ('ta' in w) {
      if (node.t !== 'ta' || !ArrayBuffer.isView(target) || !(TYPED_ARRAYS as readonly string[]).includes(target.constructor.name)) throw new Error(`task ${task}: an element write to ${name}, which is not a typed array`);
      this.applyElements(task, w.id, name, target as unknown as ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number }, w.ta, onConflict);
    } else if ('mset' in w) {
      if (!(target instanceof Map)) throw new Error(`task ${task}: a Map write to ${name}, which is not a Map`);
      for (const [k, v] of w.mset) if (claim(`${name}.get(${JSON.stringify(k)})`)) target.set(r(k), r(v));
      for (const k of w.mdel) if (claim(`${name}.get(${JSON.stringify(k)})`)) target.delete(r(k));
    } else if ('sadd' in w) {
      if (!(target instanceof Set)) throw new Error(`task ${task}: a Set write to ${name}, which is not a Set`);
      for (const k of w.sadd) if (claim(`${name}.has(${JSON.stringify(k)})`)) target.add(r(k));
      for (const k of w.sdel) if (claim(`${name}.has(${JSON.stringify(k)})`)) target.delete(r(k));
    } else if ('date' in w) {
      if (!(target instanceof Date)) throw new Error(`task ${task}: a date write to ${name}, which is not a Date`);
      if (claim(`${name}.time`)) target.setTime(w.date);
    }
  }

  /** Element-wise conflict detection for typed arrays: one int per element, allocated on first write. */
  private applyElements(task: number, id: number, name: string, target: ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number }, runs: [number, string][], onConflict: (c: Conflict) => void): void {
    let owners = this.elementWriters.get(id);
    if (!owners) this.elementWriters.set(id, (owners = new Int32Array(target.length)));
    const bytes = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
    const size = target.BYTES_PER_ELEMENT;
    for (const [first, b64] of runs) {
      const data = base64ToBytes(b64);
      const count = data.length / size;
      if (!Number.isInteger(first) || first < 0 || first + count > target.length) throw new Error(`task ${task}: elements ${first}… outside ${name} (length ${target.length})`);
      for (let e = 0; e < count; e++) {
        const owner = owners[first + e]! - 1;
        if (owner >= 0 && owner !== task) {
          onConflict({ location: `${name}[${first + e}]`, tasks: [this.label(owner), this.label(task)] });
          continue;
        }
        owners[first + e] = task + 1;
        bytes.set(data.subarray(e * size, (e + 1) * size), (first + e) * size);
      }
    }
  }
}

function keyOf(k: Key, resolve: (v: unknown) => unknown): PropertyKey {
  return typeof k === 'string' ? k : (resolve(k) as symbol);
}

/** New nodes may reference the client's objects: seed those references. */
function presetRefs(node: GraphNode, base: number, objects: unknown[], decoder: GraphDecoder): void {
  const seed = (v: unknown) => {
    if (typeof v === 'object' && v !== null && 'r' in v) {
      const r = (v as { r: number }).r;
      if (r < base) {
        if (r < 0 || r >= objects.length) throw new Error(`reference to unknown node ${r}`);
        decoder.preset(r, objects[r]);
      }
    }
  };
  switch (node.t) {
    case 'o': node.p.forEach(([k, v]) => { seed(k); seed(v); }); seed(node.cls); break;
    case 'a': node.v.forEach(seed); break;
    case 'm': node.e.forEach(([k, v]) => { seed(k); seed(v); }); break;
    case 's': node.e.forEach(seed); break;
    case 'f': throw new Error('a task sent back a new function');
    default: break;
  }
}
