/**
 * Wave2D as a plain sequential program over the same blocks and kernel as the malleable application
 * (src/frameworks/malleable/apps/wave2d.ts): the program before it was made malleable (see
 * bench/malleable-rescale.ts, Table III).
 */
import { blockShape, fillGhosts, gridResult, paddedBlock, sendEdges, summarizeBlock, type GridParams, type GridResult, type Halo } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import { advance, waveInitial, type WaveBlock } from '../../../src/frameworks/malleable/apps/wave2d.js';

export function wave2d(params: GridParams): GridResult {
  let blocks: WaveBlock[] = Array.from({ length: params.blocks * params.blocks }, (_, index) => {
    const shape = blockShape(params, index);
    const u = paddedBlock(shape, waveInitial(params.grid), () => 0);
    return { shape, u, prev: u.slice() };
  });
  for (let iteration = 0; iteration < params.iterations; iteration++) {
    const halos = blocks.map(() => [] as Array<{ from: number; msg: Halo }>);
    blocks.forEach(({ shape, u }, index) => sendEdges(params, index, shape, u, (to, msg) => halos[to]!.push({ from: index, msg })));
    blocks = blocks.map(({ shape: s, u, prev }, index) => {
      fillGhosts(s, u, halos[index]!);
      advance(s, u, prev);
      return { shape: s, u: prev, prev: u };
    });
  }
  return gridResult(params, blocks.map(({ shape, u }) => summarizeBlock(shape, u)));
}
