/**
 * The client's side of seed 002 §3.3: applies the writes of a batch's tasks to the client's own
 * objects, in place, one task at a time as its outcome arrives, and detects write-write conflicts — two
 * tasks of one batch writing the same field, element, typed-array element, Map or Set entry. A task's
 * effects apply atomically: the task applied first keeps the location; a later task that writes it
 * has none of its writes applied and fails with an error naming the location and both tasks.
 */
import type { Capture } from './capture.js';
import { GraphDecoder } from './graph-decoder.js';
import { FORBIDDEN_KEYS, TYPED_ARRAYS, base64ToBytes, type GraphNode, type Key, type TaskOutcome, type Write } from './graph-format.js';

export interface Conflict {
  location: string;
  /** The task that kept the location, and the later one. */
  tasks: [string, string];
}

/** Every write-write conflict of one task with tasks applied before it; none of its writes were applied. */
export class WriteConflictError extends Error {
  constructor(readonly conflicts: Conflict[]) {
    const [c] = conflicts;
    const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more location(s))` : '';
    super(`write-write conflict: ${c!.location} written by ${c!.tasks[0]} and ${c!.tasks[1]}${more}; none of ${c!.tasks[1]}'s writes were applied`);
    this.name = 'WriteConflictError';
  }
}

type TypedTarget = ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number };

/** Elements of a typed array a write claims: element-wise, so that neighbouring tasks do not conflict. */
interface ElementClaim {
  id: number;
  name: string;
  length: number;
  runs: { first: number; count: number }[];
}

/** One write, checked and ready to apply: the locations it claims and what applying it does. */
interface PlannedWrite {
  locations: string[];
  elements?: ElementClaim;
  apply(): void;
}

export class BatchApplier {
  private readonly writers = new Map<string, number>();
  private readonly elementWriters = new Map<number, Int32Array>();

  constructor(private readonly capture: Capture) {}

  private label(task: number): string {
    return this.capture.graph.tasks[task]?.label ?? `task ${task}`;
  }

  /**
   * Applies one task's outcome atomically and returns its result value: every write is checked first
   * (against the locations tasks applied before it claimed, and for being well-formed and allowed), and
   * only if none conflicts are they all applied. Throws a WriteConflictError naming each conflicting
   * location and the task that holds it, or an Error for a malformed or forbidden write — in both cases
   * nothing of the task was applied and it claims no location.
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
    const planned = (outcome.w ?? []).map((w) => this.plan(task, w, resolve));
    const conflicts: Conflict[] = [];
    for (const p of planned) {
      for (const location of p.locations) {
        const first = this.writers.get(location);
        if (first !== undefined && first !== task) conflicts.push({ location, tasks: [this.label(first), this.label(task)] });
      }
      if (p.elements) conflicts.push(...this.elementConflicts(task, p.elements));
    }
    if (conflicts.length > 0) throw new WriteConflictError(conflicts);
    for (const p of planned) {
      for (const location of p.locations) this.writers.set(location, task);
      if (p.elements) this.claimElements(task, p.elements);
      p.apply();
    }
    return outcome.v === undefined ? undefined : resolve(outcome.v);
  }

  /** Checks one write (target, key, shape) and returns the locations it claims and how to apply it; throws for a bad write. */
  private plan(task: number, w: Write, resolve: (v: never) => unknown): PlannedWrite {
    const target = this.capture.objects[w.id] as Record<PropertyKey, unknown> | undefined;
    const node = this.capture.graph.nodes[w.id] as GraphNode | undefined;
    if (target === undefined || node === undefined) throw new Error(`task ${task}: write to unknown node ${w.id}`);
    const name = this.capture.names[w.id] ?? `node ${w.id}`;
    const r = resolve as (v: unknown) => unknown;
    if ('k' in w) {
      const key = keyOf(w.k, r);
      if (typeof key === 'string' && FORBIDDEN_KEYS.has(key)) throw new Error(`task ${task}: refused a write to key "${key}" of ${name}`);
      if (node.t !== 'o' && node.t !== 'a' && node.t !== 'f') throw new Error(`task ${task}: a field write to ${name}, which is not an object`);
      const location = node.t === 'a' ? `${name}[${String(key)}]` : `${name}.${String(key)}`;
      if ('del' in w) return { locations: [location], apply: () => delete target[key] };
      const value = r(w.v); // decoded while checking: applying cannot fail half-way
      return { locations: [location], apply: () => (target[key] = value) };
    }
    if ('len' in w) {
      if (!Array.isArray(target)) throw new Error(`task ${task}: a length write to ${name}, which is not an array`);
      return { locations: [`${name}.length`], apply: () => (target.length = w.len) };
    }
    if ('ta' in w) {
      if (node.t !== 'ta' || !ArrayBuffer.isView(target) || !(TYPED_ARRAYS as readonly string[]).includes(target.constructor.name)) throw new Error(`task ${task}: an element write to ${name}, which is not a typed array`);
      const typed = target as unknown as TypedTarget;
      const size = typed.BYTES_PER_ELEMENT;
      const runs = w.ta.map(([first, b64]) => {
        const data = base64ToBytes(b64);
        const count = data.length / size;
        if (!Number.isInteger(first) || first < 0 || !Number.isInteger(count) || first + count > typed.length) throw new Error(`task ${task}: elements ${first}… outside ${name} (length ${typed.length})`);
        return { first, count, data };
      });
      const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
      return {
        locations: [],
        elements: { id: w.id, name, length: typed.length, runs },
        apply: () => { for (const x of runs) bytes.set(x.data, x.first * size); },
      };
    }
    if ('mset' in w) {
      if (!(target instanceof Map)) throw new Error(`task ${task}: a Map write to ${name}, which is not a Map`);
      const set = w.mset.map(([k, v]) => [r(k), r(v)] as const);
      const del = w.mdel.map((k) => r(k));
      return {
        locations: [...w.mset.map(([k]) => k), ...w.mdel].map((k) => `${name}.get(${JSON.stringify(k)})`),
        apply: () => {
          for (const [k, v] of set) target.set(k, v);
          for (const k of del) target.delete(k);
        },
      };
    }
    if ('sadd' in w) {
      if (!(target instanceof Set)) throw new Error(`task ${task}: a Set write to ${name}, which is not a Set`);
      const add = w.sadd.map((k) => r(k));
      const del = w.sdel.map((k) => r(k));
      return {
        locations: [...w.sadd, ...w.sdel].map((k) => `${name}.has(${JSON.stringify(k)})`),
        apply: () => {
          for (const k of add) target.add(k);
          for (const k of del) target.delete(k);
        },
      };
    }
    if (!(target instanceof Date)) throw new Error(`task ${task}: a date write to ${name}, which is not a Date`);
    return { locations: [`${name}.time`], apply: () => target.setTime(w.date) };
  }

  /** The typed-array elements a write would claim that an earlier task holds. */
  private elementConflicts(task: number, claim: ElementClaim): Conflict[] {
    const owners = this.elementWriters.get(claim.id);
    if (!owners) return [];
    const out: Conflict[] = [];
    for (const { first, count } of claim.runs) {
      for (let e = first; e < first + count; e++) {
        const owner = owners[e]! - 1;
        if (owner >= 0 && owner !== task) out.push({ location: `${claim.name}[${e}]`, tasks: [this.label(owner), this.label(task)] });
      }
    }
    return out;
  }

  /** One int per element (the writer's index + 1), allocated on the array's first write. */
  private claimElements(task: number, claim: ElementClaim): void {
    let owners = this.elementWriters.get(claim.id);
    if (!owners) this.elementWriters.set(claim.id, (owners = new Int32Array(claim.length)));
    for (const { first, count } of claim.runs) owners.fill(task + 1, first, first + count);
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
    case 'a': (node.v ?? []).forEach(seed); break;
    case 'm': node.e.forEach(([k, v]) => { seed(k); seed(v); }); break;
    case 's': node.e.forEach(seed); break;
    case 'f': throw new Error('a task sent back a new function');
    case 'sh': throw new Error('a task sent back a shared value');
    default: break;
  }
}
