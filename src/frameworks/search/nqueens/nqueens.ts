import { defineSearch } from '../define-search.js';
import type { EnumerationProblem } from '../search-problem.js';

/** An n-queens instance: the board size (1 ≤ n ≤ 20). */
export interface NQueens {
  n: number;
}

/** A partial placement, queens on rows 0..row−1: [row, occupied columns, ↘ diagonals, ↙ diagonals] as bitmasks. */
export type Placement = [row: number, cols: number, diag: number, anti: number];

/** Counting all placements of n non-attacking queens, row by row with bitmasks. */
export const nqueensProblem: EnumerationProblem<Placement, NQueens> = {
  name: 'nqueens',
  kind: 'enumerate',
  root: () => [0, 0, 0, 0],
  isSolution: (p, q) => p[0] === q.n,
  children(p, q) {
    const [row, cols, diag, anti] = p;
    if (row === q.n) return [];
    const full = q.n === 32 ? 0xffffffff : (1 << q.n) - 1;
    let free = ~(cols | diag | anti) & full;
    const out: Placement[] = [];
    while (free !== 0) {
      const bit = free & -free;
      free ^= bit;
      out.push([row + 1, cols | bit, ((diag | bit) << 1) & full, (anti | bit) >>> 1]);
    }
    return out;
  },
};

export default defineSearch(nqueensProblem);
