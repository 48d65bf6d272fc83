/**
 * Lulesh as a plain sequential program over the same blocks and kernels as the malleable application
 * (src/frameworks/malleable/apps/lulesh.ts): each step, every block's nodes moved with the global time
 * step, then its elements updated, the smallest time-step limit and the total energy taken over the
 * blocks in index order (see bench/malleable-rescale.ts, Table III).
 */
import { blockEnergy, hydroResult, initialBlock, lastStress, moveNodes, nextDt, summarizeBlock, updateElements, type HydroParams, type HydroResult } from '../../../src/frameworks/malleable/apps/hydro-blocks.js';

export function lulesh(params: HydroParams): HydroResult {
  const blocks = Array.from({ length: params.blocks }, (_, index) => initialBlock(params, index));
  const history: number[] = [];
  let limit: number | undefined;
  let energy: number | undefined;
  for (let step = 0; step < params.steps; step++) {
    const stress = blocks.map(lastStress);
    blocks.forEach((block, index) => {
      const dt = nextDt(block, limit);
      if (index === 0 && energy !== undefined) history.push(dt, energy);
      moveNodes(params, block, dt, index > 0 ? stress[index - 1]! : 0);
    });
    limit = Infinity;
    energy = 0;
    for (const [index, block] of blocks.entries()) {
      const right = blocks[index + 1];
      limit = Math.min(limit, updateElements(block, right?.x[0] ?? NaN, right?.u[0] ?? NaN));
      energy += blockEnergy(block);
    }
  }
  return hydroResult(blocks.map(summarizeBlock), history);
}
