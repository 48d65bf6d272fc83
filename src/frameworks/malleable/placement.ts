/**
 * Where objects run, as pure functions over the mapping: every node of a job runs one object thread
 * per core it gives the job, and each (node, thread) pair is a **place** — the seed's processing
 * element. Objects are spread over places, not just nodes, so one balancing (GreedyLB or RefineLB on
 * measured object times, load-balance.ts) moves objects between the threads of a node and between
 * nodes alike. Places are numbered node by node, each node's threads in order.
 */
import { balance, blockMapping, type Strategy } from './load-balance.js';
import type { Mapping } from './protocol.js';

/** The first place of each node, and the total: `starts[n]` is node n's thread 0. */
function placeStarts(threads: readonly number[]): { starts: number[]; total: number } {
  const starts: number[] = [];
  let total = 0;
  for (const t of threads) {
    if (!Number.isInteger(t) || t < 1) throw new RangeError(`a node runs at least one object thread, got ${t}`);
    starts.push(total);
    total += t;
  }
  return { starts, total };
}

/** A mapping from each object's place (over `nodes` with `threads` each). */
function fromPlaces(nodes: string[], threads: number[], places: readonly number[]): Mapping {
  const { starts } = placeStarts(threads);
  const nodeOf: number[] = [];
  const threadOf: number[] = [];
  starts.forEach((start, n) => {
    for (let t = 0; t < threads[n]!; t++) {
      nodeOf[start + t] = n;
      threadOf[start + t] = t;
    }
  });
  return { nodes, threads, owner: places.map((p) => nodeOf[p]!), thread: places.map((p) => threadOf[p]!) };
}

/**
 * The initial mapping (and the one after a rollback): contiguous blocks of objects over every place,
 * so that neighbouring objects share a thread and their messages never leave it.
 */
export function blockPlacement(objects: number, nodes: string[], threads: number[]): Mapping {
  if (nodes.length !== threads.length) throw new RangeError('blockPlacement: one thread count per node');
  return fromPlaces(nodes, threads, blockMapping(objects, placeStarts(threads).total));
}

/**
 * Balances the objects over the places of `target` (nodes leaving are unavailable: their objects are
 * evacuated) with `strategy` and the objects' `loads`; `threadsOf` gives a node's thread count (a node
 * of `current` keeps its own). Refine keeps what it can where it is, on its thread.
 */
export function balancePlacement(strategy: Strategy, loads: readonly number[], current: Mapping, target: string[], threadsOf: (node: string) => number): Mapping {
  const slots = [...target, ...current.nodes.filter((n) => !target.includes(n))];
  const counts = slots.map((n) => {
    const at = current.nodes.indexOf(n);
    return at >= 0 ? current.threads[at]! : threadsOf(n);
  });
  const { starts } = placeStarts(counts);
  const slotOf = current.nodes.map((n) => slots.indexOf(n));
  const owners = current.owner.map((o, i) => starts[slotOf[o]!]! + current.thread[i]!);
  const available = counts.flatMap((c, s) => new Array<boolean>(c).fill(s < target.length));
  const placed = balance(strategy, loads, owners, available);
  // Target nodes come first, so their places keep their numbers once the leaving ones are cut off.
  return fromPlaces(target, counts.slice(0, target.length), placed);
}

/** The objects of node `node` on each of its threads (index order), by thread. */
export function objectsByThread(map: Mapping, node: string): number[][] {
  const slot = map.nodes.indexOf(node);
  if (slot < 0) return [];
  const out = Array.from({ length: map.threads[slot]! }, (): number[] => []);
  map.owner.forEach((o, i) => {
    if (o === slot) out[map.thread[i]!]!.push(i);
  });
  return out;
}

/** How many object threads `node` runs under `map` (0 if it holds no place). */
export function threadsOn(map: Mapping, node: string): number {
  const slot = map.nodes.indexOf(node);
  return slot < 0 ? 0 : map.threads[slot]!;
}
