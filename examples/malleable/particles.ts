/**
 * A malleable application in a few lines: particles hop around a ring of cells. Each cell is an
 * object holding the particles inside it; every iteration each particle (those already there and those
 * that arrived) moves 0, 1 or 2 cells on, by a hash of its id and the iteration, sent as a message to
 * the cell it lands in. Nothing here knows about nodes, sockets or rescales: the runtime moves cells
 * between nodes at sync points.
 */
import { defineMalleable } from '../../src/frameworks/malleable/index.js';

export interface RingParams {
  cells: number;
  particlesPerCell: number;
  iterations: number;
}

/** How far particle `id` moves in `iteration`: 0, 1 or 2 cells (a hash; nobody moves in the last iteration). */
const hop = (id: number, iteration: number, last: number) => (iteration === last ? 0 : (Math.imul(id ^ Math.imul(iteration + 1, 0x9e3779b1), 0x85ebca6b) >>> 0) % 3);

/** Particles counted, the sum of their ids, and the sum of id × (cell + 1): equal only if every particle is in the same cell. */
export interface RingCount {
  count: number;
  idSum: number;
  weighted: number;
}

export default defineMalleable<RingParams, number[], number[], RingCount, RingCount>({
  name: 'particles',
  validate: (p) => (Number.isInteger(p?.cells) && p.cells >= 1 ? undefined : `"cells" must be a whole number ≥ 1, got ${String(p?.cells)}`),
  objects: (p) => p.cells,
  iterations: (p) => p.iterations,
  init: (index, p) => Array.from({ length: p.particlesPerCell }, (_, k) => index * p.particlesPerCell + k),
  step({ index, iteration, params, state, inbox, send }) {
    const all = [...state, ...inbox.flatMap((m) => m.msg)];
    const last = params.iterations - 1;
    for (const d of [1, 2]) send((index + d) % params.cells, all.filter((id) => hop(id, iteration, last) === d));
    return all.filter((id) => hop(id, iteration, last) === 0).sort((a, b) => a - b);
  },
  summary: (index, state) => ({ count: state.length, idSum: state.reduce((a, b) => a + b, 0), weighted: state.reduce((a, id) => a + id * (index + 1), 0) }),
  result: (cells) => cells.reduce((a, c) => ({ count: a.count + c.count, idSum: a.idSum + c.idSum, weighted: a.weighted + c.weighted }), { count: 0, idSum: 0, weighted: 0 }),
});
