/**
 * LeanMD as a plain sequential program over the same cells, cell pairs and kernels as the malleable
 * application (src/frameworks/malleable/apps/leanmd.ts): each step, the forces of every pair added to
 * its cells in pair order, the energies summed in index order, the atoms kicked, drifted and moved to
 * their new cells (see bench/malleable-rescale.ts, Table III).
 */
import { boxOf, cellCount, cellPairs, initialAtoms, integrate, joinAtoms, kinetic, leavers, mdResult, pairForces, summarizeCell, type Atoms, type MdParams, type MdResult } from '../../../src/frameworks/malleable/apps/md-cells.js';

export function leanmd(params: MdParams): MdResult {
  let cells = Array.from({ length: cellCount(params) }, (_, index) => initialAtoms(params, index));
  const { pairs } = cellPairs(params.cells);
  const energies: number[] = [];
  for (let step = 0; step < params.steps; step++) {
    const forces = cells.map((atoms) => new Float64Array(atoms.pos.length));
    let potential = 0;
    for (const [a, b] of pairs) {
      const fa = new Float64Array(cells[a]!.pos.length);
      const fb = b === a ? undefined : new Float64Array(cells[b]!.pos.length);
      potential += pairForces(boxOf(params), cells[a]!.pos, fa, b === a ? undefined : cells[b]!.pos, fb);
      for (const [cell, f] of [[a, fa], [b, fb]] as const) if (f) for (let i = 0; i < f.length; i++) forces[cell]![i]! += f[i]!;
    }
    let energy = 0;
    for (const atoms of cells) energy += kinetic(atoms);
    energies.push(energy, potential);
    const arrived = cells.map(() => [] as Atoms[]);
    cells = cells.map((atoms, index) => {
      integrate(params, atoms, forces[index]!);
      const { stay, leave } = leavers(params, index, atoms);
      for (const [to, moved] of leave) arrived[to]!.push(moved);
      return stay;
    });
    cells = cells.map((atoms, index) => joinAtoms(atoms, arrived[index]!));
  }
  return mdResult(cells.map((atoms, index) => summarizeCell(params, index, atoms)), energies);
}
