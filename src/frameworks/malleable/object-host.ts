/**
 * The objects one member hosts, without I/O: building them, stepping them, holding the messages
 * and collective traffic addressed to them per iteration, and packing them up to move (with their
 * pending messages) or to checkpoint. The member role (member.ts) routes what comes out to other nodes.
 */
import { performance } from 'node:perf_hooks';
import { CollectiveBuffer, type CollectivePart, type CollectiveView } from './collectives.js';
import type { AnyMalleableApp } from './malleable-app.js';
import type { Delivered } from './object-messages.js';

/** A message between objects, as routed by the runtime. */
export interface Routed {
  to: number;
  from: number;
  msg: unknown;
}

/** An evolving job's request from one object: run on between `min` and `max` nodes. */
export interface ResizeWish {
  from: number;
  min: number;
  max: number;
}

/** What the objects of a host sent in one iteration. */
export interface Outbox {
  messages: Routed[];
  collective: CollectivePart;
  resize?: ResizeWish;
}

export const emptyOutbox = (): Outbox => ({ messages: [], collective: { contributions: [], broadcasts: [] } });

/** An object in transit or in a checkpoint: its state, measured load, unread messages and the collectives it will read next. */
export interface PackedObject {
  index: number;
  state: unknown;
  load: number;
  inbox: Array<[iteration: number, messages: Delivered<unknown>[]]>;
  /** The combined collectives of the iteration it reads next (the same on every object of the job). */
  collective?: { iteration: number; view: CollectiveView };
}

interface Hosted {
  state: unknown;
  /** Milliseconds spent stepping it since the last balancing. */
  load: number;
}

export class ObjectHost {
  private readonly objects = new Map<number, Hosted>();
  /** iteration → object → messages for it. */
  private readonly inbox = new Map<number, Map<number, Delivered<unknown>[]>>();
  private readonly collective: CollectiveBuffer;

  constructor(private readonly app: AnyMalleableApp, private readonly params: unknown) {
    this.collective = new CollectiveBuffer(app.reductions);
  }

  get size(): number {
    return this.objects.size;
  }

  indices(): number[] {
    return [...this.objects.keys()].sort((a, b) => a - b);
  }

  has(index: number): boolean {
    return this.objects.has(index);
  }

  /** Builds the given objects; returns what they sent (read in iteration 0). */
  init(indices: readonly number[]): Routed[] {
    const out: Routed[] = [];
    for (const index of indices) {
      const state = this.app.init(index, this.params, (to, msg) => out.push({ to, from: index, msg }));
      this.objects.set(index, { state, load: 0 });
    }
    return out;
  }

  /** Messages for objects of this host, to be read in `iteration`. */
  deliver(iteration: number, items: readonly Routed[]): void {
    let forIteration = this.inbox.get(iteration);
    if (!forIteration) this.inbox.set(iteration, (forIteration = new Map()));
    for (const { to, from, msg } of items) {
      const list = forIteration.get(to);
      if (list) list.push({ from, msg });
      else forIteration.set(to, [{ from, msg }]);
    }
  }

  /** A node's collective traffic (reductions and broadcasts) read in `iteration`. */
  deliverCollective(iteration: number, part: CollectivePart): void {
    this.collective.add(iteration, part);
  }

  /** The combined collectives read in `iteration`: call once every halo batch of it is in. */
  collectiveView(iteration: number): CollectiveView {
    return this.collective.view(iteration);
  }

  /** Whether the collectives of `iteration` came whole with an object (this host need not have seen their traffic). */
  collectiveAdopted(iteration: number): boolean {
    return this.collective.adopted(iteration);
  }

  /** `iteration` has run on every object here: its collective traffic goes. */
  endIteration(iteration: number): void {
    this.collective.drop(iteration);
  }

  /** Steps one object through `iteration`; adds what it sent to `out`; returns the time taken (ms). */
  step(index: number, iteration: number, out: Outbox): number {
    const obj = this.objects.get(index);
    if (!obj) throw new Error(`object ${index} is not hosted here`);
    const messages = this.inbox.get(iteration)?.get(index) ?? [];
    this.inbox.get(iteration)?.delete(index);
    if (this.inbox.get(iteration)?.size === 0) this.inbox.delete(iteration);
    // Arrival order across nodes varies; sender order does not (a stable sort keeps each sender's order).
    const inbox = [...messages].sort((a, b) => a.from - b.from);
    const { reduced, broadcasts } = this.collective.view(iteration);
    const reductions = this.app.reductions ?? {};
    const contributed = new Set<string>();
    const where = `object ${index} in iteration ${iteration}`;
    const started = performance.now();
    const next = this.app.step({
      index, iteration, params: this.params, state: obj.state, inbox, reduced, broadcasts,
      send: (to, msg) => void out.messages.push({ to, from: index, msg }),
      broadcast: (msg) => void out.collective.broadcasts.push({ from: index, msg }),
      reduce: (name, value) => {
        if (!Object.hasOwn(reductions, name)) throw new Error(`${where}: reduction "${name}" is not declared in \`reductions\` (declared: ${Object.keys(reductions).join(', ') || 'none'})`);
        if (contributed.has(name)) throw new Error(`${where}: contributed to reduction "${name}" twice`);
        contributed.add(name);
        out.collective.contributions.push({ name, from: index, value });
      },
      requestResize: (min, max) => {
        if (!Number.isInteger(min) || min < 1 || !Number.isInteger(max) || max < min) throw new RangeError(`${where}: requestResize(min, max) needs whole numbers 1 ≤ min ≤ max, got (${min}, ${max})`);
        if (!out.resize || out.resize.from === index) out.resize = { from: index, min, max };
      },
    });
    const took = performance.now() - started;
    if (next !== undefined) obj.state = next;
    obj.load += took;
    return took;
  }

  /** Measured loads since the last reset, by object index. */
  loads(): Array<[number, number]> {
    return this.indices().map((i) => [i, this.objects.get(i)!.load]);
  }

  resetLoads(): void {
    for (const obj of this.objects.values()) obj.load = 0;
  }

  /** Removes the objects and returns them with their unread messages (`iteration`: the next to run). */
  take(indices: readonly number[], iteration: number): PackedObject[] {
    return indices.map((index) => {
      const packed = this.peek(index, iteration);
      this.objects.delete(index);
      for (const [it, byObject] of this.inbox) {
        byObject.delete(index);
        if (byObject.size === 0) this.inbox.delete(it);
      }
      return packed;
    });
  }

  /** A copy-free view of one object as it would be packed (for checkpoints; the encoder copies). */
  peek(index: number, iteration: number): PackedObject {
    const obj = this.objects.get(index);
    if (!obj) throw new Error(`object ${index} is not hosted here`);
    const inbox: PackedObject['inbox'] = [];
    for (const [it, byObject] of this.inbox) {
      const list = byObject.get(index);
      if (list) inbox.push([it, list]);
    }
    return { index, state: obj.state, load: obj.load, inbox, collective: { iteration, view: this.collective.view(iteration) } };
  }

  /** Takes in objects that moved here (or come back from a checkpoint). */
  put(objects: readonly PackedObject[]): void {
    for (const p of objects) {
      if (this.objects.has(p.index)) throw new Error(`object ${p.index} arrived twice`);
      this.objects.set(p.index, { state: p.state, load: p.load });
      for (const [it, messages] of p.inbox) this.deliver(it, messages.map(({ from, msg }) => ({ to: p.index, from, msg })));
      if (p.collective) this.collective.adopt(p.collective.iteration, p.collective.view);
    }
  }

  /** Drops every object and message (a rollback, or the job left this node). */
  clear(): void {
    this.objects.clear();
    this.inbox.clear();
    this.collective.clear();
  }

  summaries(): Array<[number, unknown]> {
    return this.indices().map((i) => [i, this.app.summary(i, this.objects.get(i)!.state, this.params)]);
  }
}
