/**
 * The physics and geometry of the LeanMD-like mini-app, shared by its malleable version (leanmd.ts)
 * and any other driver: atoms in a periodic box of cubic cells (side ≥ the cutoff), Lennard-Jones
 * forces between the atoms of each pair of neighbouring cells (a cell with itself included), and a
 * kick-drift (leapfrog) integration in reduced units (ε = σ = m = 1). Everything is deterministic:
 * atoms keep their order in a cell, forces are added in the order they are given.
 */
import { createHash } from 'node:crypto';

/** Side of a cell (σ): larger than the cutoff, so an atom interacts only with atoms of neighbouring cells. */
export const CELL_SIDE = 3;
export const CUTOFF = 2.5;
const CUTOFF2 = CUTOFF * CUTOFF;
/** The potential at the cutoff: subtracted (a shifted potential), so the energy does not jump when a pair crosses it. */
const SHIFT = 4 * (CUTOFF ** -12 - CUTOFF ** -6);

export interface MdParams {
  /** Cells along x, y and z (each ≥ 3: the 26 neighbours of a cell are distinct cells). */
  cells: [number, number, number];
  /** The atoms of a cell at the start: a lattice of atomsPerSide³. */
  atomsPerSide: number;
  steps: number;
  /** Time step (reduced units; default 0.005). */
  dt?: number;
}

/** Atoms of one cell: ids and, per atom, x y z of position and velocity. */
export interface Atoms {
  ids: number[];
  pos: Float64Array;
  vel: Float64Array;
}

export function validateMd(p: MdParams): string | undefined {
  if (typeof p !== 'object' || p === null) return 'parameters must be an object { cells: [x, y, z], atomsPerSide, steps, dt? }';
  if (!Array.isArray(p.cells) || p.cells.length !== 3 || !p.cells.every((c) => Number.isInteger(c) && c >= 3)) return `"cells" must be three whole numbers ≥ 3, got ${JSON.stringify(p.cells)}`;
  if (!Number.isInteger(p.atomsPerSide) || p.atomsPerSide < 1 || p.atomsPerSide > 8) return `"atomsPerSide" must be a whole number from 1 to 8, got ${String(p.atomsPerSide)}`;
  if (!Number.isInteger(p.steps) || p.steps < 0) return `"steps" must be a whole number ≥ 0, got ${String(p.steps)}`;
  if (p.dt !== undefined && !(typeof p.dt === 'number' && p.dt > 0 && p.dt <= 0.02)) return `"dt" must be a number in (0, 0.02], got ${String(p.dt)}`;
  return undefined;
}

export const cellCount = (p: MdParams): number => p.cells[0] * p.cells[1] * p.cells[2];

/** Cell index of cell coordinates (wrapped around the periodic box). */
function cellAt(dims: readonly number[], cx: number, cy: number, cz: number): number {
  const [nx, ny, nz] = dims as [number, number, number];
  return (((cx % nx) + nx) % nx) + nx * ((((cy % ny) + ny) % ny) + ny * (((cz % nz) + nz) % nz));
}

export interface CellPairs {
  /** [a, b] with a ≤ b: every pair of neighbouring cells once, a cell with itself included, ordered by a then by first appearance. */
  pairs: Array<[number, number]>;
  /** For each cell, the indices into `pairs` of the pairs it is in, ascending. */
  ofCell: number[][];
}

const pairCache = new Map<string, CellPairs>();

/** The cell pairs of a box (computed once per box shape). */
export function cellPairs(dims: readonly [number, number, number]): CellPairs {
  const key = dims.join('x');
  const cached = pairCache.get(key);
  if (cached) return cached;
  const [nx, ny, nz] = dims;
  const pairs: Array<[number, number]> = [];
  const seen = new Set<number>();
  const total = nx * ny * nz;
  for (let a = 0; a < total; a++) {
    const cx = a % nx, cy = Math.floor(a / nx) % ny, cz = Math.floor(a / (nx * ny));
    for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
      const b = cellAt(dims, cx + dx, cy + dy, cz + dz);
      if (b < a || seen.has(a * total + b)) continue;
      seen.add(a * total + b);
      pairs.push([a, b]);
    }
  }
  const ofCell = Array.from({ length: total }, () => [] as number[]);
  pairs.forEach(([a, b], k) => {
    ofCell[a]!.push(k);
    if (b !== a) ofCell[b]!.push(k);
  });
  const out = { pairs, ofCell };
  pairCache.set(key, out);
  return out;
}

/** A deterministic number in [0, 1) from two integers (the initial perturbations and velocities). */
function unit(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h ^= h >>> 13;
  return (h >>> 0) / 2 ** 32;
}

/** The atoms of cell `index` at the start: a perturbed lattice with random velocities in [−1, 1). */
export function initialAtoms(p: MdParams, index: number): Atoms {
  const k = p.atomsPerSide;
  const n = k * k * k;
  const [nx, ny] = p.cells;
  const origin = [index % nx, Math.floor(index / nx) % ny, Math.floor(index / (nx * ny))].map((c) => c * CELL_SIDE);
  const spacing = CELL_SIDE / k;
  const ids: number[] = [];
  const pos = new Float64Array(3 * n);
  const vel = new Float64Array(3 * n);
  for (let j = 0; j < n; j++) {
    const id = index * n + j;
    ids.push(id);
    const lattice = [j % k, Math.floor(j / k) % k, Math.floor(j / (k * k))];
    for (let d = 0; d < 3; d++) {
      pos[3 * j + d] = origin[d]! + (lattice[d]! + 0.5) * spacing + (unit(id, d) - 0.5) * 0.1 * spacing;
      vel[3 * j + d] = unit(id, d + 3) * 2 - 1;
    }
  }
  return { ids, pos, vel };
}

/** The periodic box's side lengths. */
export const boxOf = (p: MdParams): [number, number, number] => [p.cells[0] * CELL_SIDE, p.cells[1] * CELL_SIDE, p.cells[2] * CELL_SIDE];

/**
 * Lennard-Jones forces between the atoms of two cells (the same cell when `b` is undefined: each
 * pair once) within the cutoff, under the minimum image convention. Adds to `fa` and `fb`; returns
 * the (shifted) potential energy.
 */
export function pairForces(box: readonly number[], pa: Float64Array, fa: Float64Array, pb: Float64Array | undefined, fb: Float64Array | undefined): number {
  const [lx, ly, lz] = box as [number, number, number];
  const na = pa.length / 3;
  const self = pb === undefined;
  const other = pb ?? pa;
  const fo = fb ?? fa;
  const nb = other.length / 3;
  let potential = 0;
  for (let i = 0; i < na; i++) {
    const xi = pa[3 * i]!, yi = pa[3 * i + 1]!, zi = pa[3 * i + 2]!;
    let fxi = 0, fyi = 0, fzi = 0;
    for (let j = self ? i + 1 : 0; j < nb; j++) {
      let dx = xi - other[3 * j]!, dy = yi - other[3 * j + 1]!, dz = zi - other[3 * j + 2]!;
      dx -= lx * Math.round(dx / lx);
      dy -= ly * Math.round(dy / ly);
      dz -= lz * Math.round(dz / lz);
      const r2 = dx * dx + dy * dy + dz * dz;
      if (r2 >= CUTOFF2) continue;
      const inv2 = 1 / r2;
      const inv6 = inv2 * inv2 * inv2;
      const f = 24 * inv2 * inv6 * (2 * inv6 - 1);
      potential += 4 * inv6 * (inv6 - 1) - SHIFT;
      fxi += f * dx;
      fyi += f * dy;
      fzi += f * dz;
      fo[3 * j]! -= f * dx;
      fo[3 * j + 1]! -= f * dy;
      fo[3 * j + 2]! -= f * dz;
    }
    fa[3 * i]! += fxi;
    fa[3 * i + 1]! += fyi;
    fa[3 * i + 2]! += fzi;
  }
  return potential;
}

/** Kinetic energy of a cell's atoms (½ Σ v², m = 1). */
export function kinetic(atoms: Atoms): number {
  let k = 0;
  for (let i = 0; i < atoms.vel.length; i++) k += atoms.vel[i]! * atoms.vel[i]!;
  return k / 2;
}

/** Kick and drift: v += F·dt, x += v·dt, x wrapped into the box. */
export function integrate(p: MdParams, atoms: Atoms, force: Float64Array): void {
  const dt = p.dt ?? 0.005;
  const box = boxOf(p);
  for (let i = 0; i < atoms.pos.length; i++) {
    atoms.vel[i]! += force[i]! * dt;
    const x = atoms.pos[i]! + atoms.vel[i]! * dt;
    const l = box[i % 3]!;
    atoms.pos[i] = x < 0 ? x + l : x >= l ? x - l : x;
  }
}

/** The cell an atom at `pos[3i..]` is in now. */
export function cellOfAtom(p: MdParams, pos: Float64Array, i: number): number {
  return cellAt(p.cells, Math.floor(pos[3 * i]! / CELL_SIDE), Math.floor(pos[3 * i + 1]! / CELL_SIDE), Math.floor(pos[3 * i + 2]! / CELL_SIDE));
}

/** Splits off the atoms that left cell `index`, by destination (ascending), keeping the order of both parts. */
export function leavers(p: MdParams, index: number, atoms: Atoms): { stay: Atoms; leave: Map<number, Atoms> } {
  const dest = atoms.ids.map((_, i) => cellOfAtom(p, atoms.pos, i));
  const pick = (keep: (d: number) => boolean): Atoms => {
    const which = dest.flatMap((d, i) => (keep(d) ? [i] : []));
    const sub = (a: Float64Array) => Float64Array.from(which.flatMap((i) => [a[3 * i]!, a[3 * i + 1]!, a[3 * i + 2]!]));
    return { ids: which.map((i) => atoms.ids[i]!), pos: sub(atoms.pos), vel: sub(atoms.vel) };
  };
  const leave = new Map<number, Atoms>();
  for (const d of [...new Set(dest)].filter((d) => d !== index).sort((a, b) => a - b)) leave.set(d, pick((x) => x === d));
  return { stay: leave.size === 0 ? atoms : pick((d) => d === index), leave };
}

/** Appends atoms that arrived. */
export function joinAtoms(atoms: Atoms, arrived: readonly Atoms[]): Atoms {
  if (arrived.length === 0) return atoms;
  const all = [atoms, ...arrived];
  const cat = (key: 'pos' | 'vel') => {
    const out = new Float64Array(all.reduce((n, a) => n + a[key].length, 0));
    let at = 0;
    for (const a of all) {
      out.set(a[key], at);
      at += a[key].length;
    }
    return out;
  };
  return { ids: all.flatMap((a) => a.ids), pos: cat('pos'), vel: cat('vel') };
}

export interface CellSummary {
  count: number;
  /** Atoms in another cell than the one they started in. */
  moved: number;
  /** SHA-256 of the cell's ids, positions and velocities. */
  hash: string;
  momentum: [number, number, number];
}

export function summarizeCell(p: MdParams, index: number, atoms: Atoms): CellSummary {
  const h = createHash('sha256');
  h.update(Buffer.from(Float64Array.from(atoms.ids).buffer));
  h.update(Buffer.from(atoms.pos.buffer, atoms.pos.byteOffset, atoms.pos.byteLength));
  h.update(Buffer.from(atoms.vel.buffer, atoms.vel.byteOffset, atoms.vel.byteLength));
  const momentum: [number, number, number] = [0, 0, 0];
  for (let i = 0; i < atoms.vel.length; i++) momentum[i % 3]! += atoms.vel[i]!;
  const perCell = p.atomsPerSide ** 3;
  const moved = atoms.ids.filter((id) => Math.floor(id / perCell) !== index).length;
  return { count: atoms.ids.length, moved, hash: h.digest('hex'), momentum };
}

export interface MdResult {
  atoms: number;
  /** Atoms that ended in another cell than they started in (migrated between cells). */
  moved: number;
  /** SHA-256 over the cells' hashes in index order: equal iff every atom is in the same cell with the same bits. */
  checksum: string;
  /** Total momentum (conserved: Newton's third law holds pair by pair). */
  momentum: [number, number, number];
  /** Per step: [kinetic, potential] energy, as the reductions gave them. */
  energies: number[];
}

export function mdResult(cells: readonly CellSummary[], energies: number[]): MdResult {
  const h = createHash('sha256');
  const momentum: [number, number, number] = [0, 0, 0];
  let atoms = 0;
  let moved = 0;
  for (const c of cells) {
    h.update(c.hash);
    atoms += c.count;
    moved += c.moved;
    for (let d = 0; d < 3; d++) momentum[d]! += c.momentum[d]!;
  }
  return { atoms, moved, checksum: h.digest('hex'), momentum, energies };
}
