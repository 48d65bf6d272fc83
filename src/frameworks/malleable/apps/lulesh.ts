/**
 * A Lulesh-like hydrodynamics proxy (after the paper's §V: LULESH, explicit Lagrangian shock
 * hydrodynamics with leapfrog time integration; the physics, on a 1-D mesh, is in hydro-blocks.ts).
 * The objects are blocks of the mesh. One time step is two iterations:
 *   even  each block takes the global time step — the minimum over every element of the last step's
 *         limits, a `min` reduction — moves its nodes with it and sends its first node to its left
 *         neighbour; block 0 records the step's dt and the total energy (a `sum` reduction);
 *   odd   each block updates its elements, reduces its elements' time-step limit and its energy,
 *         and sends its last element's stress to its right neighbour.
 */
import { defineMalleable } from '../malleable-app.js';
import { blockEnergy, hydroResult, initialBlock, lastStress, moveNodes, nextDt, summarizeBlock, updateElements, validateHydro, type HydroBlock, type HydroParams, type HydroResult, type HydroSummary } from './hydro-blocks.js';

export type HydroMessage = { stress: number } | { node: [x: number, u: number] };

/** A block, and in block 0 the [dt, energy] of every step so far. */
export type HydroObject = HydroBlock & { history: number[] };

export default defineMalleable<HydroParams, HydroObject, HydroMessage, HydroSummary & { history: number[] }, HydroResult, { dt: number; energy: number }>({
  name: 'lulesh',
  validate: validateHydro,
  objects: (p) => p.blocks,
  iterations: (p) => 2 * p.steps,
  reductions: { dt: 'min', energy: 'sum' },
  init(index, p, send) {
    const block = initialBlock(p, index);
    if (index < p.blocks - 1) send(index + 1, { stress: lastStress(block) });
    return { ...block, history: [] };
  },
  step({ index, iteration, params, state, inbox, send, reduced, reduce }) {
    if (iteration % 2 === 0) {
      const dt = nextDt(state, reduced.dt);
      if (index === 0 && reduced.energy !== undefined) state.history.push(dt, reduced.energy);
      const left = inbox.find((m) => m.from === index - 1)?.msg as { stress: number } | undefined;
      moveNodes(params, state, dt, left?.stress ?? 0);
      if (index > 0) send(index - 1, { node: [state.x[0]!, state.u[0]!] });
    } else {
      const right = (inbox.find((m) => m.from === index + 1)?.msg as { node: [number, number] } | undefined)?.node ?? [NaN, NaN];
      reduce('dt', updateElements(state, right[0], right[1]));
      reduce('energy', blockEnergy(state));
      if (index < params.blocks - 1) send(index + 1, { stress: lastStress(state) });
    }
  },
  summary: (_index, state) => ({ ...summarizeBlock(state), history: state.history }),
  result: (summaries) => hydroResult(summaries, summaries[0]?.history ?? []),
});
