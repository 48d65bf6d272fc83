/**
 * LeanMD-like molecular dynamics (after the Charm++ mini-app in the paper's §V: "cells" of atoms
 * and "computes" of cell pairs): objects 0 … C − 1 are the cells of a periodic box, objects C …
 * the pairs of neighbouring cells (md-cells.ts). One time step is three iterations:
 *   0  cells take in the atoms that moved to them and send their positions to their pairs;
 *   1  pairs compute Lennard-Jones forces and send each cell its share; pairs reduce the potential
 *      energy, cells the kinetic energy (a per-step energy reduction);
 *   2  cells add up their forces (in pair order), kick and drift their atoms, and send the atoms
 *      that left them to the cells they are in now; cell 0 records the step's energies.
 * A last iteration (a phase 0) takes in the atoms that moved in the last step.
 */
import { defineMalleable } from '../malleable-app.js';
import { cellCount, cellPairs, initialAtoms, integrate, joinAtoms, kinetic, leavers, mdResult, pairForces, boxOf, summarizeCell, validateMd, type Atoms, type CellSummary, type MdParams, type MdResult } from './md-cells.js';

/** A cell's atoms (and, in cell 0, the energies so far); a pair holds nothing between steps. */
export type MdObject = { cell: Atoms; energies: number[] } | { pair: number };

/** A cell's summary (cell 0's with the energies of every step); a pair's is null. */
export type MdSummary = (CellSummary & { energies?: number[] }) | null;

export type MdMessage =
  | { positions: Float64Array }
  | { forces: Float64Array }
  | { atoms: Atoms };

export default defineMalleable<MdParams, MdObject, MdMessage, MdSummary, MdResult, { kinetic: number; potential: number }>({
  name: 'leanmd',
  validate: validateMd,
  objects: (p) => cellCount(p) + cellPairs(p.cells).pairs.length,
  iterations: (p) => 3 * p.steps + 1,
  reductions: { kinetic: 'sum', potential: 'sum' },
  init: (index, p) => (index < cellCount(p) ? { cell: initialAtoms(p, index), energies: [] } : { pair: index - cellCount(p) }),
  step({ index, iteration, params, state, inbox, send, reduce, reduced }) {
    const phase = iteration % 3;
    const cells = cellCount(params);
    const { pairs, ofCell } = cellPairs(params.cells);
    if ('pair' in state) {
      if (phase !== 1) return;
      const [a, b] = pairs[state.pair]!;
      const positions = (cell: number) => (inbox.find((m) => m.from === cell)!.msg as { positions: Float64Array }).positions;
      const pa = positions(a);
      const fa = new Float64Array(pa.length);
      const pb = b === a ? undefined : positions(b);
      const fb = pb && new Float64Array(pb.length);
      reduce('potential', pairForces(boxOf(params), pa, fa, pb, fb));
      send(a, { forces: fa });
      if (fb) send(b, { forces: fb });
      return;
    }
    if (phase === 0) {
      state.cell = joinAtoms(state.cell, inbox.map((m) => (m.msg as { atoms: Atoms }).atoms));
      if (iteration < 3 * params.steps) for (const k of ofCell[index]!) send(cells + k, { positions: state.cell.pos });
    } else if (phase === 1) {
      reduce('kinetic', kinetic(state.cell));
    } else {
      const force = new Float64Array(state.cell.pos.length);
      for (const m of inbox) {
        const f = (m.msg as { forces: Float64Array }).forces;
        for (let i = 0; i < f.length; i++) force[i]! += f[i]!;
      }
      integrate(params, state.cell, force);
      const { stay, leave } = leavers(params, index, state.cell);
      state.cell = stay;
      for (const [to, atoms] of leave) send(to, { atoms });
      if (index === 0) state.energies.push(reduced.kinetic!, reduced.potential!);
    }
  },
  summary: (index, state, p) => ('cell' in state ? { ...summarizeCell(p, index, state.cell), ...(index === 0 ? { energies: state.energies } : {}) } : null),
  result: (summaries, p) => mdResult(summaries.slice(0, cellCount(p)) as CellSummary[], summaries[0]?.energies ?? []),
});
