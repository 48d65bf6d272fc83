/** Test application for the decision skeleton: find one placement of n queens (positions kept in the node). */
import { defineSearch } from '../../../../src/frameworks/search/define-search.js';
import type { DecisionProblem } from '../../../../src/frameworks/search/search-problem.js';

type Node = number[]; // [cols, diag, anti, ...column of the queen on each placed row]

export const firstPlacement: DecisionProblem<Node, { n: number }> = {
  name: 'nqueens-first',
  kind: 'decide',
  root: () => [0, 0, 0],
  isSolution: (p, q) => p.length - 3 === q.n,
  solutionOf: (p) => p.slice(3),
  children(p, q) {
    if (p.length - 3 === q.n) return [];
    const full = (2 ** q.n) - 1;
    const out: Node[] = [];
    for (let c = 0; c < q.n; c++) {
      const bit = 2 ** c;
      if ((p[0]! & bit) || (p[1]! & bit) || (p[2]! & bit)) continue;
      out.push([p[0]! | bit, ((p[1]! | bit) * 2) & full, Math.floor((p[2]! | bit) / 2), ...p.slice(3), c]);
    }
    return out;
  },
};

export default defineSearch(firstPlacement);
