/**
 * Stencil2D (seed 003 §V): 5-point Jacobi relaxation on a square grid, every cell replaced by the
 * average of itself and its four neighbours; the grid's top edge is held at 1, the others at 0.
 */
import { defineMalleable } from '../malleable-app.js';
import { blockShape, fillGhosts, gridResult, paddedBlock, sendEdges, Side, summarizeBlock, validateGrid, type BlockShape, type BlockSummary, type GridParams, type GridResult, type Halo } from './grid-blocks.js';

export interface StencilBlock {
  shape: BlockShape;
  /** Current values, padded with ghost cells (the only state: what moves and what is checkpointed). */
  u: Float64Array;
}

/** The initial value of global cell (row, col). */
export const stencilInitial = (row: number, col: number): number => ((row * 131 + col * 71) % 97) / 97;
/** The fixed value beyond each edge of the grid. */
export const stencilBoundary = (side: Side): number => (side === Side.North ? 1 : 0);

/** One Jacobi sweep of a padded block (ghosts filled): a new array, the fixed boundary ghosts kept. */
export function relax(s: BlockShape, u: Float64Array): Float64Array {
  const next = u.slice(); // keeps the fixed boundary ghosts; the interior is overwritten below
  const w = s.cols + 2;
  for (let r = 1; r <= s.rows; r++) {
    for (let p = r * w + 1, end = r * w + s.cols; p <= end; p++) {
      next[p] = (u[p]! + u[p - w]! + u[p + w]! + u[p - 1]! + u[p + 1]!) * 0.2;
    }
  }
  return next;
}

export default defineMalleable<GridParams, StencilBlock, Halo, BlockSummary, GridResult>({
  name: 'stencil2d',
  validate: validateGrid,
  objects: (p) => p.blocks * p.blocks,
  iterations: (p) => p.iterations,
  init(index, p, send) {
    const shape = blockShape(p, index);
    const u = paddedBlock(shape, stencilInitial, stencilBoundary);
    sendEdges(p, index, shape, u, send);
    return { shape, u };
  },
  step({ index, params, state, inbox, send }) {
    const { shape: s, u } = state;
    fillGhosts(s, u, inbox);
    const next = relax(s, u);
    sendEdges(params, index, s, next, send);
    return { shape: s, u: next };
  },
  summary: (_index, state) => summarizeBlock(state.shape, state.u),
  result: (summaries, p) => gridResult(p, summaries),
});
