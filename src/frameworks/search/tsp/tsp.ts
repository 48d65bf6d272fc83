import { defineSearch } from '../define-search.js';
import type { OptimisationProblem } from '../search-problem.js';

/** What the TSP search needs of an instance: n and the n×n integer distance matrix (row-major). */
export interface TspMatrix {
  dimension: number;
  distance: Int32Array;
}

/** A partial tour starting at city 0: [cost so far, city 0, city a, city b, …]. */
export type TourNode = number[];

/**
 * Symmetric TSP by branch-and-bound (seed 000 §4): extend the path from city 0, nearest city
 * first; bound = path cost + a minimum spanning tree of the unvisited cities + the cheapest edges
 * joining them to the path's two ends, under Held–Karp penalties found once at the root (at least
 * as strong as the seed's path + MST bound, which is the case π = 0); incumbent seeded by nearest
 * neighbour + 2-opt.
 */
export const tspProblem: OptimisationProblem<TourNode, TspMatrix> = {
  name: 'tsp',
  kind: 'optimise',
  sense: 'min',
  root: () => [0, 0],
  objective(node, m) {
    const n = m.dimension;
    if (node.length - 1 < n) return undefined;
    return node[0]! + m.distance[node[n]! * n]!;
  },
  bound: (node, m) => node[0]! + spanningTreeBound(node, m),
  solutionOf: (node) => node.slice(1),
  children(node, m) {
    const n = m.dimension;
    const d = m.distance;
    const visited = visitedOf(node, n);
    const last = node[node.length - 1]!;
    const next: number[] = [];
    for (let c = 1; c < n; c++) if (visited[c] === 0) next.push(c);
    next.sort((a, b) => d[last * n + a]! - d[last * n + b]!);
    return next.map((c) => {
      const child = node.slice();
      child[0] = node[0]! + d[last * n + c]!;
      child.push(c);
      return child;
    });
  },
  initial(m) {
    const tour = improveBy2Opt(nearestNeighbourTour(m), m);
    return { value: tourCost(tour, m), solution: tour };
  },
};

function visitedOf(node: TourNode, n: number): Uint8Array {
  const visited = new Uint8Array(n);
  for (let i = 1; i < node.length; i++) visited[node[i]!] = 1;
  return visited;
}

/**
 * A lower bound on completing the path: the rest of the tour runs from the last city through every
 * unvisited city back to city 0. With Held–Karp penalties π (any π gives a valid bound; good ones
 * from the root make it much stronger) it costs at least
 *   MST of the unvisited cities under c(i,j)+π(i)+π(j)  + the cheapest c(last,u)+π(u)
 *   + the cheapest c(u,0)+π(u)  − 2·Σ π(u)      (each unvisited city has degree 2 in the path).
 */
function spanningTreeBound(node: TourNode, m: TspMatrix): number {
  const n = m.dimension;
  const d = m.distance;
  const pi = penaltiesOf(m);
  const visited = visitedOf(node, n);
  const last = node[node.length - 1]!;
  const members: number[] = [];
  for (let c = 0; c < n; c++) if (visited[c] === 0) members.push(c);
  const k = members.length;
  if (k === 0) return d[last * n]!;
  let fromLast = Infinity;
  let toStart = Infinity;
  let penalties = 0;
  for (const c of members) {
    fromLast = Math.min(fromLast, d[last * n + c]! + pi[c]!);
    toStart = Math.min(toStart, d[c * n]! + pi[c]!);
    penalties += pi[c]!;
  }
  const key = new Float64Array(k).fill(Infinity);
  const inTree = new Uint8Array(k);
  key[0] = 0;
  let total = fromLast + toStart - 2 * penalties;
  for (let step = 0; step < k; step++) {
    let best = -1;
    for (let i = 0; i < k; i++) if (inTree[i] === 0 && (best < 0 || key[i]! < key[best]!)) best = i;
    inTree[best] = 1;
    total += key[best]!;
    const b = members[best]!;
    const row = b * n;
    for (let i = 0; i < k; i++) {
      if (inTree[i] === 0) {
        const c = members[i]!;
        const w = d[row + c]! + pi[b]! + pi[c]!;
        if (w < key[i]!) key[i] = w;
      }
    }
  }
  // Tour costs are integers: a fractional bound can be rounded up (less a hair for float error).
  return Math.ceil(total - 1e-7);
}

const penaltyCache = new WeakMap<TspMatrix, Float64Array>();

/** Held–Karp penalties for the whole instance, computed once per instance (and per worker). */
function penaltiesOf(m: TspMatrix): Float64Array {
  let pi = penaltyCache.get(m);
  if (!pi) {
    pi = heldKarpPenalties(m);
    penaltyCache.set(m, pi);
  }
  return pi;
}

/**
 * Subgradient ascent on the 1-tree bound (Held and Karp): raise the penalty of cities of degree > 2
 * in the minimum 1-tree, lower it for leaves, keep the π of the best bound seen.
 */
export function heldKarpPenalties(m: TspMatrix, iterations = 30 * m.dimension): Float64Array {
  const n = m.dimension;
  const d = m.distance;
  const pi = new Float64Array(n);
  const best = new Float64Array(n);
  let bestBound = -Infinity;
  const upper = tourCost(improveBy2Opt(nearestNeighbourTour(m), m), m);
  let lambda = 2;
  const degree = new Int32Array(n);
  const key = new Float64Array(n);
  const parent = new Int32Array(n);
  const inTree = new Uint8Array(n);
  for (let it = 0; it < iterations && n > 3; it++) {
    // Minimum spanning tree over cities 1..n-1 with penalised costs, then city 0's two cheapest edges.
    degree.fill(0);
    inTree.fill(0);
    key.fill(Infinity);
    key[1] = 0;
    parent[1] = -1;
    let w = 0;
    for (let step = 1; step < n; step++) {
      let v = -1;
      for (let i = 1; i < n; i++) if (inTree[i] === 0 && (v < 0 || key[i]! < key[v]!)) v = i;
      inTree[v] = 1;
      w += key[v]!;
      if (parent[v]! >= 0) {
        degree[v]!++;
        degree[parent[v]!]!++;
      }
      for (let i = 1; i < n; i++) {
        if (inTree[i] === 0) {
          const c = d[v * n + i]! + pi[v]! + pi[i]!;
          if (c < key[i]!) {
            key[i] = c;
            parent[i] = v;
          }
        }
      }
    }
    let a = -1;
    let b = -1;
    for (let i = 1; i < n; i++) {
      const c = d[i]! + pi[i]!;
      if (a < 0 || c < d[a]! + pi[a]!) {
        b = a;
        a = i;
      } else if (b < 0 || c < d[b]! + pi[b]!) {
        b = i;
      }
    }
    w += d[a]! + pi[a]! + d[b]! + pi[b]!;
    degree[a]!++;
    degree[b]!++;
    let sumPi = 0;
    for (let i = 1; i < n; i++) sumPi += pi[i]!;
    const bound = w - 2 * sumPi;
    if (bound > bestBound) {
      bestBound = bound;
      best.set(pi);
    }
    let norm = 0;
    for (let i = 1; i < n; i++) norm += (degree[i]! - 2) ** 2;
    if (norm === 0) break; // the 1-tree is a tour: the bound is optimal
    const step = (lambda * (upper - bound)) / norm;
    for (let i = 1; i < n; i++) pi[i] = pi[i]! + step * (degree[i]! - 2);
    if (it % n === n - 1) lambda *= 0.7;
  }
  best[0] = 0; // city 0 is never unvisited
  return best;
}

export function tourCost(tour: readonly number[], m: TspMatrix): number {
  const n = m.dimension;
  let cost = 0;
  for (let i = 0; i < tour.length; i++) cost += m.distance[tour[i]! * n + tour[(i + 1) % tour.length]!]!;
  return cost;
}

function nearestNeighbourTour(m: TspMatrix): number[] {
  const n = m.dimension;
  const visited = new Uint8Array(n);
  const tour = [0];
  visited[0] = 1;
  for (let step = 1; step < n; step++) {
    const last = tour[tour.length - 1]!;
    let best = -1;
    for (let c = 0; c < n; c++) if (visited[c] === 0 && (best < 0 || m.distance[last * n + c]! < m.distance[last * n + best]!)) best = c;
    visited[best] = 1;
    tour.push(best);
  }
  return tour;
}

/** 2-opt until no improving move is left (city 0 stays first). */
function improveBy2Opt(tour: number[], m: TspMatrix): number[] {
  const n = m.dimension;
  const d = m.distance;
  for (let improved = true; improved;) {
    improved = false;
    for (let i = 1; i < n - 1; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = tour[i - 1]!, b = tour[i]!, c = tour[j]!, e = tour[(j + 1) % n]!;
        if (d[a * n + c]! + d[b * n + e]! < d[a * n + b]! + d[c * n + e]!) {
          tour.splice(i, j - i + 1, ...tour.slice(i, j + 1).reverse());
          improved = true;
        }
      }
    }
  }
  return tour;
}

export default defineSearch(tspProblem);
