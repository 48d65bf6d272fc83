/**
 * The physics of the Lulesh-like proxy (lulesh.ts), apart from how it is driven: explicit Lagrangian
 * shock hydrodynamics on a staggered 1-D mesh, with LULESH's time-step structure — nodal forces from
 * element pressure and artificial viscosity, a leapfrog update of nodal velocities and positions,
 * element volumes, densities and energies from the new positions, an ideal-gas equation of state,
 * and a time step limited by the Courant condition and the relative volume change of every element
 * (the global minimum of the elements' limits). The problem is a planar Sedov blast: a uniform gas
 * at rest between two walls, with energy deposited in the first element.
 *
 * The mesh of `elements` elements on [0, 1] is cut into `blocks` contiguous blocks (the objects).
 * Node i is the left node of element i; a block owns the nodes of its elements (the last block the
 * right wall's node too). A block needs its left neighbour's last element's pressure + viscosity to
 * move its first node, and its right neighbour's first node to update its last element: the halos.
 */
import { createHash } from 'node:crypto';

export interface HydroParams {
  /** Elements of the whole mesh. */
  elements: number;
  /** Blocks (objects) the mesh is cut into. */
  blocks: number;
  steps: number;
  /** Energy deposited in the first element (default 1). */
  blast?: number;
}

const GAMMA = 1.4;
/** Artificial viscosity: quadratic and linear coefficients (LULESH's qqc and qlc are of this order). */
const Q_QUAD = 2;
const Q_LIN = 0.5;
const CFL = 0.5;
/** Largest relative volume change of an element in one step (LULESH's dvovmax). */
const DV_MAX = 0.1;
/** Largest growth of the time step from one step to the next. */
const DT_GROWTH = 1.2;
const E_FLOOR = 1e-12;

export function validateHydro(p: HydroParams): string | undefined {
  if (typeof p !== 'object' || p === null) return 'parameters must be an object { elements, blocks, steps, blast? }';
  if (!Number.isInteger(p.blocks) || p.blocks < 1) return `"blocks" must be a whole number ≥ 1, got ${String(p.blocks)}`;
  if (!Number.isInteger(p.elements) || p.elements < 2 * p.blocks) return `"elements" must be a whole number ≥ 2 × blocks (${2 * p.blocks}), got ${String(p.elements)}`;
  if (!Number.isInteger(p.steps) || p.steps < 0) return `"steps" must be a whole number ≥ 0, got ${String(p.steps)}`;
  if (p.blast !== undefined && !(typeof p.blast === 'number' && p.blast > 0)) return `"blast" must be a number > 0, got ${String(p.blast)}`;
  return undefined;
}

/** Elements [first, end) of block `b`. */
export function blockRange(p: HydroParams, b: number): [number, number] {
  return [Math.floor((p.elements * b) / p.blocks), Math.floor((p.elements * (b + 1)) / p.blocks)];
}

/** One block's part of the mesh. Arrays are indexed from the block's first element (and node). */
export interface HydroBlock {
  first: number;
  /** Element masses (constant), volumes, densities, specific internal energies, pressures, viscosities. */
  mass: Float64Array;
  volume: Float64Array;
  rho: Float64Array;
  energy: Float64Array;
  p: Float64Array;
  q: Float64Array;
  /** Nodal masses, positions and velocities of the block's nodes (one more in the last block: the right wall). */
  nodeMass: Float64Array;
  x: Float64Array;
  u: Float64Array;
  /** The time step of the current step, and the time reached. */
  dt: number;
  time: number;
}

/** The first step's time step: a tenth of the blast element's Courant limit (every block computes the same). */
export function initialDt(p: HydroParams): number {
  const h = 1 / p.elements;
  const sound = Math.sqrt(GAMMA * (GAMMA - 1) * ((p.blast ?? 1) / h));
  return (0.1 * CFL * h) / sound;
}

export function initialBlock(p: HydroParams, b: number): HydroBlock {
  const [first, end] = blockRange(p, b);
  const n = end - first;
  const h = 1 / p.elements;
  const last = b === p.blocks - 1;
  const mass = new Float64Array(n).fill(h);
  const energy = new Float64Array(n).fill(E_FLOOR);
  if (first === 0) energy[0] = (p.blast ?? 1) / h;
  const rho = new Float64Array(n).fill(1);
  const nodes = n + (last ? 1 : 0);
  // Element masses are all h: a node's mass is h, a wall node's h / 2.
  const nodeMass = Float64Array.from({ length: nodes }, (_, i) => (first + i === 0 || first + i === p.elements ? h / 2 : h));
  const block: HydroBlock = {
    first, mass, volume: new Float64Array(n).fill(h), rho, energy, p: new Float64Array(n), q: new Float64Array(n),
    nodeMass, x: Float64Array.from({ length: nodes }, (_, i) => (first + i) * h), u: new Float64Array(nodes), dt: initialDt(p), time: 0,
  };
  for (let e = 0; e < n; e++) block.p[e] = (GAMMA - 1) * rho[e]! * energy[e]!;
  return block;
}

/** Pressure + viscosity of the block's last element (what its right neighbour's first node needs). */
export const lastStress = (s: HydroBlock): number => s.p[s.p.length - 1]! + s.q[s.q.length - 1]!;

/** The time step for this step: the last step's limit (the global minimum), grown by at most DT_GROWTH. */
export function nextDt(s: HydroBlock, limit: number | undefined): number {
  return limit === undefined ? s.dt : Math.min(limit, s.dt * DT_GROWTH);
}

/**
 * Moves the block's nodes: accelerations from the stress difference across each node (the left
 * neighbour's last element's stress for the first node; walls do not move), then u += a·dt, x += u·dt.
 */
export function moveNodes(p: HydroParams, s: HydroBlock, dt: number, stressLeft: number): void {
  s.dt = dt;
  s.time += dt;
  for (let i = 0; i < s.x.length; i++) {
    const node = s.first + i;
    if (node === 0 || node === p.elements) continue;
    const left = i === 0 ? stressLeft : s.p[i - 1]! + s.q[i - 1]!;
    const right = s.p[i]! + s.q[i]!;
    s.u[i]! += (-(right - left) / s.nodeMass[i]!) * dt;
    s.x[i]! += s.u[i]! * dt;
  }
}

/**
 * Updates the block's elements from its moved nodes (the right neighbour's first node for the last
 * element): volume, density, viscosity, energy (p dV work), pressure. Returns the elements' smallest
 * time-step limit.
 */
export function updateElements(s: HydroBlock, rightX: number, rightU: number): number {
  let limit = Infinity;
  const n = s.mass.length;
  for (let e = 0; e < n; e++) {
    const x1 = e + 1 < s.x.length ? s.x[e + 1]! : rightX;
    const u1 = e + 1 < s.u.length ? s.u[e + 1]! : rightU;
    const volume = x1 - s.x[e]!;
    if (!(volume > 0)) throw new Error(`element ${s.first + e} inverted (volume ${volume}) at t = ${s.time}`);
    const dv = volume - s.volume[e]!;
    const du = u1 - s.u[e]!;
    const rho = s.mass[e]! / volume;
    const sound = Math.sqrt((GAMMA * s.p[e]!) / s.rho[e]!);
    const q = du < 0 ? rho * (Q_QUAD * du * du + Q_LIN * sound * -du) : 0;
    const energy = Math.max(E_FLOOR, s.energy[e]! - ((s.p[e]! + q) * dv) / s.mass[e]!);
    s.volume[e] = volume;
    s.rho[e] = rho;
    s.q[e] = q;
    s.energy[e] = energy;
    s.p[e] = (GAMMA - 1) * rho * energy;
    const c = Math.sqrt((GAMMA * s.p[e]!) / rho);
    limit = Math.min(limit, (CFL * volume) / (c + Math.abs(du)));
    if (dv !== 0) limit = Math.min(limit, (DV_MAX * s.dt) / Math.abs(dv / volume));
  }
  return limit;
}

/** Internal plus kinetic energy of the block (conserved up to the scheme's error). */
export function blockEnergy(s: HydroBlock): number {
  let total = 0;
  for (let e = 0; e < s.mass.length; e++) total += s.mass[e]! * s.energy[e]!;
  for (let i = 0; i < s.u.length; i++) total += 0.5 * s.nodeMass[i]! * s.u[i]! * s.u[i]!;
  return total;
}

export interface HydroSummary {
  /** SHA-256 of the block's positions, velocities, energies and pressures. */
  hash: string;
  /** The densest element of the block: [global index, density] (the shock front is the densest). */
  densest: [number, number];
  time: number;
}

export function summarizeBlock(s: HydroBlock): HydroSummary {
  const h = createHash('sha256');
  for (const a of [s.x, s.u, s.energy, s.p]) h.update(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  let densest = 0;
  for (let e = 1; e < s.rho.length; e++) if (s.rho[e]! > s.rho[densest]!) densest = e;
  return { hash: h.digest('hex'), densest: [s.first + densest, s.rho[densest]!], time: s.time };
}

export interface HydroResult {
  /** SHA-256 over the blocks' hashes in index order. */
  checksum: string;
  time: number;
  /** Where the shock is: the densest element's index and density. */
  shock: [number, number];
  /** Per step: [dt, total energy of the step before] as the reductions gave them. */
  history: number[];
}

export function hydroResult(blocks: readonly HydroSummary[], history: number[]): HydroResult {
  const h = createHash('sha256');
  let shock: [number, number] = [0, -Infinity];
  for (const b of blocks) {
    h.update(b.hash);
    if (b.densest[1] > shock[1]) shock = b.densest;
  }
  return { checksum: h.digest('hex'), time: blocks[0]?.time ?? 0, shock, history };
}
