/**
 * Number of ways to place n non-attacking queens on an n×n board, for n = 0…15 (index = n).
 * Published values, not computed here: OEIS A000170, "Number of ways of placing n nonattacking queens on an
 * n X n board", https://oeis.org/A000170 (a(0) = 1 by convention: the empty board).
 */
export const NQUEENS_SOLUTIONS: readonly number[] = Object.freeze([
  1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
]);
