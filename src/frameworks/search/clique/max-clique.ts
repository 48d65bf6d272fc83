import { defineSearch } from '../define-search.js';
import type { OptimisationProblem } from '../search-problem.js';
import type { Graph } from './dimacs.js';
import { COLOUR_SHIFT, colourSort, orderedGraph, popcount, VERTEX_MASK } from './ordered-graph.js';

/**
 * A search node. Vertices are positions in the solver's degeneracy order (see ordered-graph.ts), and
 * sets of them are bitsets of 32-bit words. A node is in one of two states:
 *
 * - fresh (`branches` null): a clique and the candidates that could join it, not yet coloured;
 * - coloured: the candidates in colour order with their colours (`branches`), and `next`, the index
 *   there of the next vertex to branch on. Branching goes from the highest colour down (BBMC), and a
 *   vertex leaves `candidates` once its branch is made.
 *
 * Expanding a node branches on one vertex and hands back the node itself, its loop advanced by one,
 * as the second child: so pruning that continuation (its bound is |clique| + the colour of its next
 * vertex, and colours only fall from there) drops every remaining branch at once, as BBMC's loop
 * does, and a split hands over the rest of a loop. Everything is plain data (arrays and typed arrays).
 * The search loop owns a node once it is popped, so advancing it in place is safe; a root node from
 * `root()` is consumed by the search that runs it.
 */
export interface CliqueNode {
  clique: number[];
  candidates: Int32Array;
  /** Candidates not yet branched on (0: a complete clique). */
  size: number;
  /** Once coloured: each candidate (low 16 bits) with its colour (above), in colour order. */
  branches: Int32Array | null;
  /** The index in `branches` of the next vertex to branch on (they are taken from the end). */
  next: number;
  /** No clique below this node is larger. */
  bound: number;
}

/**
 * Maximum clique by branch-and-bound of the MCS/BBMC family: vertices in degeneracy order, adjacency
 * as bitsets, a greedy sequential colouring computed on bitsets at every node as the bound (a clique
 * takes at most one vertex per colour class), branching on the highest colour first. The incumbent
 * (the job's shared `bound` variable) prunes through the search loop.
 */
export const maxCliqueProblem: OptimisationProblem<CliqueNode, Graph> = {
  name: 'clique',
  kind: 'optimise',
  sense: 'max',
  root(g) {
    const words = Math.ceil(g.n / 32);
    const candidates = new Int32Array(words).fill(-1);
    if (g.n % 32 !== 0) candidates[words - 1] = (1 << (g.n % 32)) - 1;
    return { clique: [], candidates, size: g.n, branches: null, next: -1, bound: g.n };
  },
  objective: (node) => (node.size === 0 ? node.clique.length : undefined),
  bound: (node) => node.bound,
  solutionOf(node, g) {
    const { vertexAt } = orderedGraph(g);
    return node.clique.map((p) => vertexAt[p]!).sort((a, b) => a - b);
  },
  children(node, g) {
    const og = orderedGraph(g);
    const { words, adj } = og;
    let branches = node.branches;
    if (branches === null) {
      branches = node.branches = colourSort(og, node.candidates, node.size);
      node.next = node.size - 1;
    }
    const i = node.next;
    const branch = branches[i]!;
    const v = branch & VERTEX_MASK;
    const p = node.candidates;
    const row = v * words;
    const q = new Int32Array(words);
    let size = 0;
    for (let w = 0; w < words; w++) {
      const x = p[w]! & adj[row + w]!;
      if (x !== 0) {
        q[w] = x;
        size += popcount(x);
      }
    }
    p[v >>> 5] = p[v >>> 5]! & ~(1 << (v & 31));
    const k = node.clique.length;
    const clique = node.clique.slice();
    clique.push(v);
    const child: CliqueNode = { clique, candidates: q, size, branches: null, next: -1, bound: k + Math.min(branch >>> COLOUR_SHIFT, size + 1) };
    if (i === 0) return [child];
    node.next = i - 1;
    node.size = i;
    node.bound = k + (branches[i - 1]! >>> COLOUR_SHIFT);
    return [child, node];
  },
  initial(g) {
    // Greedy: repeatedly add the candidate with the most neighbours among the remaining candidates.
    const { words, adj, vertexAt } = orderedGraph(g);
    const p = maxCliqueProblem.root(g).candidates;
    const clique: number[] = [];
    for (;;) {
      let best = -1;
      let bestDegree = -1;
      for (let w = 0; w < words; w++) {
        for (let x = p[w]!; x !== 0; x &= x - 1) {
          const v = (w << 5) + 31 - Math.clz32(x & -x);
          let d = 0;
          for (let w2 = 0; w2 < words; w2++) d += popcount(p[w2]! & adj[v * words + w2]!);
          if (d > bestDegree) {
            best = v;
            bestDegree = d;
          }
        }
      }
      if (best < 0) break;
      clique.push(vertexAt[best]!);
      for (let w = 0; w < words; w++) p[w] = p[w]! & adj[best * words + w]!;
    }
    return { value: clique.length, solution: clique.sort((a, b) => a - b) };
  },
};

export default defineSearch(maxCliqueProblem);
