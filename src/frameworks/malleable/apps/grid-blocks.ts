/**
 * A square grid split into B × B blocks, one object per block, each block padded with one ghost
 * cell on every side: the decomposition Stencil2D and Wave2D share, and their halo exchange.
 */
import { createHash } from 'node:crypto';
import type { Delivered, Send } from '../object-messages.js';

export interface GridParams {
  /** Cells per side of the whole grid. */
  grid: number;
  /** Blocks per side (the grid has blocks² objects). */
  blocks: number;
  iterations: number;
}

/** Which ghost row or column of the receiver a halo fills. */
export const enum Side { North = 0, South = 1, West = 2, East = 3 }

export interface Halo {
  side: Side;
  values: Float64Array;
}

export interface BlockShape {
  /** First global row and column of the block's interior. */
  row0: number;
  col0: number;
  rows: number;
  cols: number;
}

export function validateGrid(p: GridParams): string | undefined {
  if (typeof p !== 'object' || p === null) return 'parameters must be an object { grid, blocks, iterations }';
  if (!Number.isInteger(p.grid) || p.grid < 2) return `"grid" must be a whole number ≥ 2, got ${String(p.grid)}`;
  if (!Number.isInteger(p.blocks) || p.blocks < 1 || p.blocks > p.grid) return `"blocks" must be a whole number from 1 to grid (${p.grid}), got ${String(p.blocks)}`;
  if (!Number.isInteger(p.iterations) || p.iterations < 0) return `"iterations" must be a whole number ≥ 0, got ${String(p.iterations)}`;
  return undefined;
}

/** Global rows (or columns) [start, end) of block `b` of `blocks` over `grid` cells. */
function span(grid: number, blocks: number, b: number): [number, number] {
  return [Math.floor((grid * b) / blocks), Math.floor((grid * (b + 1)) / blocks)];
}

export function blockShape(p: GridParams, index: number): BlockShape {
  const [r0, r1] = span(p.grid, p.blocks, Math.floor(index / p.blocks));
  const [c0, c1] = span(p.grid, p.blocks, index % p.blocks);
  return { row0: r0, col0: c0, rows: r1 - r0, cols: c1 - c0 };
}

/** A padded array of the block, filled by `cell(globalRow, globalCol)` inside and `ghost` outside. */
export function paddedBlock(s: BlockShape, cell: (row: number, col: number) => number, ghost: (side: Side) => number): Float64Array {
  const w = s.cols + 2;
  const a = new Float64Array((s.rows + 2) * w);
  for (let c = 1; c <= s.cols; c++) {
    a[c] = ghost(Side.North);
    a[(s.rows + 1) * w + c] = ghost(Side.South);
  }
  for (let r = 1; r <= s.rows; r++) {
    a[r * w] = ghost(Side.West);
    a[r * w + s.cols + 1] = ghost(Side.East);
    for (let c = 1; c <= s.cols; c++) a[r * w + c] = cell(s.row0 + r - 1, s.col0 + c - 1);
  }
  return a;
}

/** Sends the block's outer interior rows and columns to its neighbours (each fills the facing ghost). */
export function sendEdges(p: GridParams, index: number, s: BlockShape, a: Float64Array, send: Send<Halo>): void {
  const w = s.cols + 2;
  const bx = index % p.blocks;
  const by = Math.floor(index / p.blocks);
  const column = (c: number) => Float64Array.from({ length: s.rows }, (_, r) => a[(r + 1) * w + c]!);
  if (by > 0) send(index - p.blocks, { side: Side.South, values: a.slice(w + 1, w + 1 + s.cols) });
  if (by < p.blocks - 1) send(index + p.blocks, { side: Side.North, values: a.slice(s.rows * w + 1, s.rows * w + 1 + s.cols) });
  if (bx > 0) send(index - 1, { side: Side.East, values: column(1) });
  if (bx < p.blocks - 1) send(index + 1, { side: Side.West, values: column(s.cols) });
}

/** Writes the received halos into the ghost cells. */
export function fillGhosts(s: BlockShape, a: Float64Array, inbox: readonly Delivered<Halo>[]): void {
  const w = s.cols + 2;
  for (const { msg } of inbox) {
    const v = msg.values;
    switch (msg.side) {
      case Side.North: a.set(v, 1); break;
      case Side.South: a.set(v, (s.rows + 1) * w + 1); break;
      case Side.West: for (let r = 0; r < s.rows; r++) a[(r + 1) * w] = v[r]!; break;
      case Side.East: for (let r = 0; r < s.rows; r++) a[(r + 1) * w + s.cols + 1] = v[r]!; break;
    }
  }
}

export interface BlockSummary {
  /** SHA-256 of the block's interior, row by row, as little-endian float64. */
  hash: string;
  sum: number;
}

export function summarizeBlock(s: BlockShape, a: Float64Array): BlockSummary {
  const w = s.cols + 2;
  const h = createHash('sha256');
  let sum = 0;
  for (let r = 1; r <= s.rows; r++) {
    const row = a.subarray(r * w + 1, r * w + 1 + s.cols);
    h.update(Buffer.from(row.buffer, row.byteOffset, row.byteLength));
    for (let c = 0; c < row.length; c++) sum += row[c]!;
  }
  return { hash: h.digest('hex'), sum };
}

export interface GridResult {
  grid: number;
  blocks: number;
  iterations: number;
  /** SHA-256 over the block hashes in index order: equal iff every cell is bit-identical. */
  checksum: string;
  /** Sum of every cell (block sums added in index order). */
  sum: number;
}

export function gridResult(p: GridParams, summaries: readonly BlockSummary[]): GridResult {
  const h = createHash('sha256');
  let sum = 0;
  for (const s of summaries) {
    h.update(s.hash);
    sum += s.sum;
  }
  return { grid: p.grid, blocks: p.blocks, iterations: p.iterations, checksum: h.digest('hex'), sum };
}
