/**
 * The function tasks of the mosaic example (a Montage in miniature, after AME's Montage runs: which
 * tiles overlap is known only once they are projected). A tile is a span of a one-dimensional sky
 * with a background level.
 */
import type { FunctionTaskContext } from '../../src/frameworks/workflow/index.js';

interface Tile { x0: number; x1: number; level: number }

const read = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);

/** raw-I.txt (`x0 width level`) → proj-I.json: the tile's span on the sky and its level. */
export function project(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  const [i] = task.args;
  const [x0, width, level] = read(inputs[`raw-${i}.txt`]).trim().split(/\s+/).map(Number);
  return { [`proj-${i}.json`]: JSON.stringify({ x0: x0!, x1: x0! + width!, level: level! } satisfies Tile) };
}

/**
 * Reads every projected tile, finds the pairs that overlap and adds a `diff-I-J` task for each (reading
 * the two tiles) and a `fit` task gathering the differences: tasks no one could list before the tiles
 * were projected.
 */
export function overlaps(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  const tiles = task.args.map((i) => [i, JSON.parse(read(inputs[`proj-${i}.json`])) as Tile] as const);
  const pairs: string[] = [];
  for (const [i, a] of tiles) for (const [j, b] of tiles) if (i < j && a.x0 < b.x1 && b.x0 < a.x1) pairs.push(`${i}-${j}`);
  task.addTasks([
    ...pairs.map((p) => {
      const [i, j] = p.split('-');
      return { id: `diff-${p}`, fn: { export: 'diff' }, category: 'diff', args: [i!, j!], inputs: [`proj-${i}.json`, `proj-${j}.json`], outputs: [`diff-${p}.txt`] };
    }),
    { id: 'fit', fn: { export: 'fit' }, inputs: pairs.map((p) => `diff-${p}.txt`), outputs: ['fit.txt'] },
  ]);
  return { 'pairs.txt': `${pairs.join('\n')}\n` };
}

/** The difference of two overlapping tiles' levels over their overlap (level J − level I, times its width). */
export function diff(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  const [i, j] = task.args;
  const a = JSON.parse(read(inputs[`proj-${i}.json`])) as Tile;
  const b = JSON.parse(read(inputs[`proj-${j}.json`])) as Tile;
  return { [`diff-${i}-${j}.txt`]: `${(b.level - a.level) * (Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0))}\n` };
}

/** The sum of the differences (what a background model would minimise). */
export function fit(inputs: Record<string, Uint8Array>): Record<string, string> {
  return { 'fit.txt': `${Object.values(inputs).reduce((s, b) => s + Number(read(b)), 0)}\n` };
}
