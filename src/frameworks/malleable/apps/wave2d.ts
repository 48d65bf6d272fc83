/**
 * Wave2D (seed 003 §V): the 2-D wave equation by explicit finite differences, a Gaussian pulse in
 * the middle of a square membrane clamped at 0 on every edge (u_next = 2u − u_prev + c²·Δu).
 */
import { defineMalleable } from '../malleable-app.js';
import { blockShape, fillGhosts, gridResult, paddedBlock, sendEdges, summarizeBlock, validateGrid, type BlockShape, type BlockSummary, type GridParams, type GridResult, type Halo } from './grid-blocks.js';

/** Courant number squared (stable below 0.5 in 2-D). */
export const WAVE_C2 = 0.25;

export interface WaveBlock {
  shape: BlockShape;
  u: Float64Array;
  /** The previous time step; overwritten by the next one. */
  prev: Float64Array;
}

/** The initial displacement of global cell (row, col) on a grid of `n` cells per side. */
export function waveInitial(n: number): (row: number, col: number) => number {
  const mid = (n - 1) / 2;
  const sigma2 = 2 * (n / 16) ** 2;
  return (row, col) => Math.exp(-((row - mid) ** 2 + (col - mid) ** 2) / sigma2);
}

/** One time step of a padded block (ghosts of `u` filled): the next displacement overwrites `prev`. */
export function advance(s: BlockShape, u: Float64Array, prev: Float64Array): void {
  const w = s.cols + 2;
  for (let r = 1; r <= s.rows; r++) {
    for (let p = r * w + 1, end = r * w + s.cols; p <= end; p++) {
      const c = u[p]!;
      prev[p] = 2 * c - prev[p]! + WAVE_C2 * (u[p - w]! + u[p + w]! + u[p - 1]! + u[p + 1]! - 4 * c);
    }
  }
}

export default defineMalleable<GridParams, WaveBlock, Halo, BlockSummary, GridResult>({
  name: 'wave2d',
  validate: validateGrid,
  objects: (p) => p.blocks * p.blocks,
  iterations: (p) => p.iterations,
  init(index, p, send) {
    const shape = blockShape(p, index);
    const u = paddedBlock(shape, waveInitial(p.grid), () => 0);
    sendEdges(p, index, shape, u, send);
    return { shape, u, prev: u.slice() };
  },
  step({ index, params, state, inbox, send }) {
    const { shape: s, u, prev } = state;
    fillGhosts(s, u, inbox);
    advance(s, u, prev);
    sendEdges(params, index, s, prev, send);
    return { shape: s, u: prev, prev: u };
  },
  summary: (_index, state) => summarizeBlock(state.shape, state.u),
  result: (summaries, p) => gridResult(p, summaries),
});
