/**
 * Collectives of a malleable application, without I/O: per-iteration reductions (every object may
 * contribute a value to a named reduction; the combined value is read by every object in the next
 * iteration) and broadcasts (a value one object sends to every object). Reductions are folded in
 * object index order, never in arrival or node order, so a reduced value is bit-identical however
 * the objects are spread over nodes and threads — across shrink, expand, replace, balancing and
 * rollbacks — and equal to the sequential run's.
 */
import type { Delivered } from './object-messages.js';

/**
 * How the contributions to a reduction combine: `sum`, `min` and `max` over numbers, or a function
 * `(a, b) => c` over any values the runtime can copy. Contributions are folded left in object index
 * order: op(op(v₀, v₁), v₂)… — a custom operation needs to be neither associative nor commutative.
 */
export type ReduceOp<T = unknown> = 'sum' | 'min' | 'max' | ((a: T, b: T) => T);

/** One object's contribution to one reduction. */
export interface Contribution {
  name: string;
  from: number;
  value: unknown;
}

/** What every object reads in an iteration: the previous iteration's combined reductions and broadcasts. */
export interface CollectiveView {
  reduced: Record<string, unknown>;
  /** By sender index, then send order per sender. */
  broadcasts: Delivered<unknown>[];
}

/** A node's collective traffic of one iteration (its objects' contributions and broadcasts), sent to every other node. */
export interface CollectivePart {
  contributions: Contribution[];
  broadcasts: Delivered<unknown>[];
}

/** Checks an application's reduction declarations; returns what is wrong, naming the reduction. */
export function checkReductions(reductions: unknown): string | undefined {
  if (reductions === undefined) return undefined;
  if (typeof reductions !== 'object' || reductions === null) return '`reductions` must be an object { name: "sum" | "min" | "max" | (a, b) => c }';
  for (const [name, op] of Object.entries(reductions)) {
    if (op !== 'sum' && op !== 'min' && op !== 'max' && typeof op !== 'function') return `reduction "${name}" must be "sum", "min", "max" or a function (a, b) => c, got ${JSON.stringify(op)}`;
  }
  return undefined;
}

function numeric(name: string, c: Contribution): number {
  if (typeof c.value !== 'number') throw new TypeError(`reduction "${name}": object ${c.from} contributed ${typeof c.value}, not a number`);
  return c.value;
}

/** Folds contributions (already in index order) with `op`. */
export function fold(name: string, op: ReduceOp, ordered: readonly Contribution[]): unknown {
  if (ordered.length === 0) return undefined;
  if (op === 'sum' || op === 'min' || op === 'max') {
    let acc = numeric(name, ordered[0]!);
    for (let k = 1; k < ordered.length; k++) {
      const v = numeric(name, ordered[k]!);
      acc = op === 'sum' ? acc + v : op === 'min' ? Math.min(acc, v) : Math.max(acc, v);
    }
    return acc;
  }
  let acc = ordered[0]!.value;
  for (let k = 1; k < ordered.length; k++) acc = op(acc, ordered[k]!.value);
  return acc;
}

interface Pending {
  contributions: Contribution[];
  broadcasts: Delivered<unknown>[];
  /** Combined once complete (or taken over whole from an object that moved here). */
  view?: CollectiveView;
}

/**
 * The collective traffic a host has for the iterations still to run, keyed by the iteration that
 * reads it. A view is combined only once every contribution is in (the caller knows when: all halo
 * batches of the iteration have arrived), and kept from then on.
 */
export class CollectiveBuffer {
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly reductions: Readonly<Record<string, ReduceOp>> = {}) {}

  private entry(iteration: number): Pending {
    let p = this.pending.get(iteration);
    if (!p) this.pending.set(iteration, (p = { contributions: [], broadcasts: [] }));
    return p;
  }

  /** Adds a node's part of the traffic read in `iteration` (this host's own, or another node's). */
  add(iteration: number, part: CollectivePart): void {
    if (part.contributions.length === 0 && part.broadcasts.length === 0) return;
    const p = this.entry(iteration);
    if (p.view) throw new Error(`collective traffic for iteration ${iteration} arrived after it was combined`);
    p.contributions.push(...part.contributions);
    p.broadcasts.push(...part.broadcasts);
  }

  /** Takes over a view combined elsewhere (it came with an object that moved here, or from a checkpoint). */
  adopt(iteration: number, view: CollectiveView): void {
    const p = this.entry(iteration);
    p.view ??= view;
  }

  /** Whether this host holds the combined view (or traffic) of `iteration` as another host gave it. */
  adopted(iteration: number): boolean {
    return this.pending.get(iteration)?.view !== undefined;
  }

  /** The combined reductions and broadcasts read in `iteration` (call once all its traffic is in). */
  view(iteration: number): CollectiveView {
    const p = this.entry(iteration);
    if (p.view) return p.view;
    const byName = new Map<string, Contribution[]>();
    for (const c of p.contributions) {
      const list = byName.get(c.name);
      if (list) list.push(c);
      else byName.set(c.name, [c]);
    }
    const reduced: Record<string, unknown> = {};
    for (const name of [...byName.keys()].sort()) {
      const op = this.reductions[name];
      if (op === undefined) throw new Error(`reduction "${name}" is not declared in the application's \`reductions\``);
      const ordered = byName.get(name)!.sort((a, b) => a.from - b.from);
      for (let k = 1; k < ordered.length; k++) {
        if (ordered[k]!.from === ordered[k - 1]!.from) throw new Error(`object ${ordered[k]!.from} contributed to reduction "${name}" twice in iteration ${iteration - 1}`);
      }
      reduced[name] = fold(name, op, ordered);
    }
    // A stable sort: each sender's broadcasts keep their send order (they travel in one batch).
    const broadcasts = [...p.broadcasts].sort((a, b) => a.from - b.from);
    p.view = { reduced, broadcasts };
    p.contributions = [];
    p.broadcasts = [];
    return p.view;
  }

  /** The traffic of an iteration that has run. */
  drop(iteration: number): void {
    this.pending.delete(iteration);
  }

  clear(): void {
    this.pending.clear();
  }
}
