/**
 * Stencil2D as a plain sequential program over the same blocks and kernel as the malleable
 * application (src/frameworks/malleable/apps/stencil2d.ts): the program before it was made
 * malleable. bench/malleable-rescale.ts runs it (its result must equal the malleable job's, bit for
 * bit) and counts the lines the malleable version changes (Table III).
 */
import { blockShape, fillGhosts, gridResult, paddedBlock, sendEdges, summarizeBlock, type GridParams, type GridResult, type Halo } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import { relax, stencilBoundary, stencilInitial } from '../../../src/frameworks/malleable/apps/stencil2d.js';

export function stencil2d(params: GridParams): GridResult {
  let blocks = Array.from({ length: params.blocks * params.blocks }, (_, index) => {
    const shape = blockShape(params, index);
    return { shape, u: paddedBlock(shape, stencilInitial, stencilBoundary) };
  });
  for (let iteration = 0; iteration < params.iterations; iteration++) {
    const halos = blocks.map(() => [] as Array<{ from: number; msg: Halo }>);
    blocks.forEach(({ shape, u }, index) => sendEdges(params, index, shape, u, (to, msg) => halos[to]!.push({ from: index, msg })));
    blocks = blocks.map(({ shape: s, u }, index) => {
      fillGhosts(s, u, halos[index]!);
      return { shape: s, u: relax(s, u) };
    });
  }
  return gridResult(params, blocks.map(({ shape, u }) => summarizeBlock(shape, u)));
}
