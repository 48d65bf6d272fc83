// The clique solver's view of a graph: vertices renumbered into a degeneracy (minimum-width) order and
// adjacency as bitsets over the new numbers, as in Tomita's MCS and San Segundo's BBMC. Built once per
// graph object and cached: a job's input is shipped once to each worker and kept there, so every task
// of the job that runs on that worker reuses the same tables.
import type { Graph } from './dimacs.js';

export interface OrderedGraph {
  n: number;
  /** 32-bit words per bitset row. */
  words: number;
  /**
   * Row p (words [p*words, (p+1)*words)): the neighbours of the vertex at position p, as positions.
   * Position 0 is the last vertex the degeneracy order removed (the densest core), position n−1 the first.
   * Int32 words, not Uint32: V8 keeps an int32 word in a register, while a Uint32 one ≥ 2³¹ becomes a double.
   */
  adj: Int32Array;
  /** vertexAt[p]: the graph's (0-based) vertex at position p. */
  vertexAt: Int32Array;
  /** Scratch bitsets for colouring (one search runs at a time per thread). */
  uncoloured: Int32Array;
  colourClass: Int32Array;
}

const cache = new WeakMap<Graph, OrderedGraph>();

/** The ordered bitset graph of `g`, built on first use and cached for the lifetime of `g`. */
export function orderedGraph(g: Graph): OrderedGraph {
  let og = cache.get(g);
  if (og === undefined) {
    og = buildOrderedGraph(g);
    cache.set(g, og);
  }
  return og;
}

/** Set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/**
 * Degeneracy (minimum-width) order, as MCS's initial order: repeatedly take a vertex of minimum degree
 * in what remains (ties: the one of smaller degree in the whole graph, then the higher vertex number)
 * and put it last. Returns the vertices from first (position 0) to last.
 */
export function degeneracyOrder(g: Graph): Int32Array {
  const { n, wordsPerRow: words, adjacency } = g;
  const degree = new Int32Array(n);
  for (let v = 0; v < n; v++) {
    let d = 0;
    for (let w = 0; w < words; w++) d += popcount(adjacency[v * words + w]!);
    degree[v] = d;
  }
  const remaining = new Int32Array(degree);
  const removed = new Uint8Array(n);
  const order = new Int32Array(n);
  for (let pos = n - 1; pos >= 0; pos--) {
    let best = -1;
    for (let v = 0; v < n; v++) {
      if (removed[v]) continue;
      if (best < 0 || remaining[v]! < remaining[best]! || (remaining[v] === remaining[best] && degree[v]! <= degree[best]!)) best = v;
    }
    order[pos] = best;
    removed[best] = 1;
    const row = best * words;
    for (let w = 0; w < words; w++) {
      for (let x = adjacency[row + w]!; x !== 0; x &= x - 1) remaining[(w << 5) + 31 - Math.clz32(x & -x)]!--;
    }
  }
  return order;
}

function buildOrderedGraph(g: Graph): OrderedGraph {
  const { n, wordsPerRow: words, adjacency } = g;
  // A branch packs a position (16 bits) and a colour (≤ n) shifted by 16 into a positive int32.
  if (n > 0x7fff) throw new RangeError(`the clique solver takes at most 32767 vertices, not ${n}`);
  const vertexAt = degeneracyOrder(g);
  const positionOf = new Int32Array(n);
  for (let p = 0; p < n; p++) positionOf[vertexAt[p]!] = p;
  const adj = new Int32Array(n * words);
  for (let p = 0; p < n; p++) {
    const row = vertexAt[p]! * words;
    for (let w = 0; w < words; w++) {
      for (let x = adjacency[row + w]!; x !== 0; x &= x - 1) {
        const q = positionOf[(w << 5) + 31 - Math.clz32(x & -x)]!;
        adj[p * words + (q >>> 5)]! |= 1 << (q & 31);
      }
    }
  }
  return {
    n, words, adj, vertexAt,
    uncoloured: new Int32Array(words), colourClass: new Int32Array(words),
  };
}

/** A branch: a vertex (position) in the low 16 bits, its colour above them. */
export const VERTEX_MASK = 0xffff;
export const COLOUR_SHIFT = 16;

/**
 * Greedy sequential colouring of the bitset `p` (BBMC): colour classes are built one at a time, each
 * by taking the lowest-numbered uncoloured vertex and dropping its neighbours from the class's
 * candidates. Returns the `size` vertices of `p` in colour order, each with its colour (1-based,
 * non-decreasing along the array).
 */
export function colourSort(og: OrderedGraph, p: Int32Array, size: number): Int32Array {
  const { words, adj, uncoloured: u, colourClass: q } = og;
  const branches = new Int32Array(size);
  let lo = 0;
  let hi = words - 1;
  while (p[lo] === 0) lo++;
  while (p[hi] === 0) hi--;
  for (let w = lo; w <= hi; w++) u[w] = p[w]!;
  let count = 0;
  let k = 0;
  while (count < size) {
    k++;
    while (u[lo] === 0) lo++;
    while (u[hi] === 0) hi--;
    for (let w = lo; w <= hi; w++) q[w] = u[w]!;
    const tag = k << COLOUR_SHIFT;
    for (let w = lo; w <= hi; w++) {
      let x = q[w]!;
      while (x !== 0) {
        const bit = x & -x;
        const v = (w << 5) + 31 - Math.clz32(bit);
        u[w] = u[w]! ^ bit;
        branches[count++] = tag | v;
        const row = v * words;
        x &= ~(bit | adj[row + w]!);
        for (let w2 = w + 1; w2 <= hi; w2++) q[w2] = q[w2]! & ~adj[row + w2]!;
      }
    }
  }
  return branches;
}
