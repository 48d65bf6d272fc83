import { defineSearch } from '../define-search.js';
import type { OptimisationProblem } from '../search-problem.js';
import { hasEdge, type Graph } from './dimacs.js';

/** A search node: the clique so far, the vertices that could still join it, and an upper bound. */
export interface CliqueNode {
  clique: number[];
  candidates: number[];
  /** |clique| + colours needed for the candidates: no clique below this node is larger. */
  bound: number;
}

/**
 * Maximum clique by branch-and-bound with a greedy-colouring bound (Tomita and Seki's MCQ): the
 * candidates are coloured greedily; a clique takes at most one vertex per colour class, so a
 * vertex of colour k can lead to a clique of at most |clique| + k. Vertices are expanded from the
 * highest colour down, each with only the not-yet-expanded candidates adjacent to it.
 */
export const maxCliqueProblem: OptimisationProblem<CliqueNode, Graph> = {
  name: 'clique',
  kind: 'optimise',
  sense: 'max',
  root(g) {
    const degree = (v: number) => {
      let d = 0;
      for (let u = 0; u < g.n; u++) if (u !== v && hasEdge(g, u, v)) d++;
      return d;
    };
    const order = Array.from({ length: g.n }, (_, v) => v).sort((a, b) => degree(b) - degree(a) || a - b);
    return { clique: [], candidates: order, bound: g.n };
  },
  objective: (node) => (node.candidates.length === 0 ? node.clique.length : undefined),
  bound: (node) => node.bound,
  solutionOf: (node) => [...node.clique].sort((a, b) => a - b),
  children(node, g) {
    const { order, colour } = greedyColouring(node.candidates, g);
    const children: CliqueNode[] = [];
    for (let i = order.length - 1; i >= 0; i--) {
      const v = order[i]!;
      const candidates: number[] = [];
      for (let j = 0; j < i; j++) if (hasEdge(g, v, order[j]!)) candidates.push(order[j]!);
      children.push({ clique: [...node.clique, v], candidates, bound: node.clique.length + colour[i]! });
    }
    return children;
  },
  initial(g) {
    // Greedy: repeatedly add the candidate with the most neighbours among the remaining candidates.
    let candidates = Array.from({ length: g.n }, (_, v) => v);
    const clique: number[] = [];
    while (candidates.length > 0) {
      let best = candidates[0]!;
      let bestDegree = -1;
      for (const v of candidates) {
        let d = 0;
        for (const u of candidates) if (u !== v && hasEdge(g, u, v)) d++;
        if (d > bestDegree) {
          best = v;
          bestDegree = d;
        }
      }
      clique.push(best);
      candidates = candidates.filter((u) => u !== best && hasEdge(g, u, best));
    }
    return { value: clique.length, solution: clique.sort((a, b) => a - b) };
  },
};

/** Greedy sequential colouring; returns the vertices ordered by colour and each one's colour (1-based). */
function greedyColouring(vertices: readonly number[], g: Graph): { order: number[]; colour: number[] } {
  const order: number[] = [];
  const colour: number[] = [];
  let uncoloured = [...vertices];
  for (let k = 1; uncoloured.length > 0; k++) {
    const cls: number[] = [];
    const rest: number[] = [];
    for (const v of uncoloured) {
      if (cls.every((u) => !hasEdge(g, u, v))) cls.push(v);
      else rest.push(v);
    }
    for (const v of cls) {
      order.push(v);
      colour.push(k);
    }
    uncoloured = rest;
  }
  return { order, colour };
}

export default defineSearch(maxCliqueProblem);
