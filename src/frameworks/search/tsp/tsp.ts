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
 * joining them to the path's two ends (at least as strong as the seed's path + MST bound);
 * incumbent seeded by nearest neighbour + 2-opt.
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
 * A lower bound on completing the path: the remaining tour runs from the last city through every
 * unvisited city back to city 0, so it costs at least the MST of the unvisited cities plus the
 * cheapest edge from the last city into them and the cheapest edge from them back to city 0.
 */
function spanningTreeBound(node: TourNode, m: TspMatrix): number {
  const n = m.dimension;
  const d = m.distance;
  const visited = visitedOf(node, n);
  const last = node[node.length - 1]!;
  const members: number[] = [];
  for (let c = 0; c < n; c++) if (visited[c] === 0) members.push(c);
  const k = members.length;
  if (k === 0) return d[last * n]!;
  let fromLast = Infinity;
  let toStart = Infinity;
  for (const c of members) {
    fromLast = Math.min(fromLast, d[last * n + c]!);
    toStart = Math.min(toStart, d[c * n]!);
  }
  const key = new Float64Array(k).fill(Infinity);
  const inTree = new Uint8Array(k);
  key[0] = 0;
  let total = fromLast + toStart;
  for (let step = 0; step < k; step++) {
    let best = -1;
    for (let i = 0; i < k; i++) if (inTree[i] === 0 && (best < 0 || key[i]! < key[best]!)) best = i;
    inTree[best] = 1;
    total += key[best]!;
    const row = members[best]! * n;
    for (let i = 0; i < k; i++) {
      if (inTree[i] === 0) {
        const w = d[row + members[i]!]!;
        if (w < key[i]!) key[i] = w;
      }
    }
  }
  return total;
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
