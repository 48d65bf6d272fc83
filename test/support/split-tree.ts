import type { Rng } from '../../src/util/rng.js';

/** Parent id to child ids, rooted at "t0"; shape varies widely with the seed. */
export function randomSplitTree(rng: Rng, size: number): Map<string, string[]> {
  const tree = new Map<string, string[]>([['t0', []]]);
  const open = ['t0'];
  let next = 1;
  while (next < size && open.length > 0) {
    const i = rng.int(0, open.length - 1);
    const parent = open[i]!;
    open[i] = open[open.length - 1]!;
    open.pop();
    const fanout = Math.min(size - next, rng.pick([0, 1, 1, 2, 2, 3, 5, 8]));
    for (let k = 0; k < fanout; k++) {
      const id = `t${next++}`;
      tree.get(parent)!.push(id);
      tree.set(id, []);
      open.push(id);
    }
    if (open.length === 0 && next < size) open.push(parent); // keep growing until the size is reached
  }
  return tree;
}
