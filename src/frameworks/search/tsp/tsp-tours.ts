/**
 * TSP tours and instances in memory: a tour's length and validity, and seeded random Euclidean
 * instances (the benchmarks' and tests' generated inputs). Files are read by tsplib.ts.
 */
import { Rng } from '../../../util/rng.js';
import { coordinateDistances } from './tsplib-distances.js';
import { MAX_MATRIX_DIMENSION, type TspInstance } from './tsplib.js';

/** Length of the closed tour (0-based city indices; the edge back to the first city is included). */
export function tourLength(instance: TspInstance, tour: readonly number[]): number {
  const n = instance.dimension;
  const d = instance.distance;
  for (const c of tour) {
    if (!Number.isInteger(c) || c < 0 || c >= n) throw new RangeError(`tour city ${c} is out of range 0..${n - 1}`);
  }
  let length = 0;
  for (let k = 0; k < tour.length; k++) {
    const a = tour[k]!;
    const b = tour[k + 1 === tour.length ? 0 : k + 1]!;
    length += d[a * n + b]!;
  }
  return length;
}

/** null when `tour` is a permutation of 0..n-1, else the reason it is not. */
export function validateTour(instance: TspInstance, tour: readonly number[]): string | null {
  const n = instance.dimension;
  if (tour.length !== n) return `tour has ${tour.length} cities, expected ${n}`;
  const seen = new Uint8Array(n);
  for (let k = 0; k < tour.length; k++) {
    const c = tour[k]!;
    if (!Number.isInteger(c) || c < 0 || c >= n) return `city ${c} at position ${k} is out of range 0..${n - 1}`;
    if (seen[c] !== 0) return `city ${c} appears more than once (again at position ${k})`;
    seen[c] = 1;
  }
  return null;
}

/**
 * A random symmetric EUC_2D instance: n cities with integer coordinates uniform in [0, size), from a seeded
 * mulberry32 stream, so the same (n, seed, size) always gives the same instance.
 */
export function randomEuclideanInstance(n: number, seed: number, size = 1000): TspInstance {
  if (!Number.isInteger(n) || n < 1 || n > MAX_MATRIX_DIMENSION) throw new RangeError(`n must be an integer in 1..${MAX_MATRIX_DIMENSION}, got ${n}`);
  if (!Number.isInteger(size) || size < 1 || size > 1e8) throw new RangeError(`size must be an integer in 1..1e8, got ${size}`);
  const rng = new Rng(seed);
  const xy = new Float64Array(2 * n);
  for (let k = 0; k < 2 * n; k++) xy[k] = Math.floor(rng.next() * size);
  const distance = coordinateDistances('EUC_2D', n, xy, (a, b, d) => {
    throw new RangeError(`distance ${d} between cities ${a} and ${b} does not fit a 32-bit integer`);
  });
  return {
    name: `rand${n}-${seed}`,
    comment: `${n} random cities, integer coordinates uniform in [0,${size}), seed ${seed}`,
    dimension: n,
    edgeWeightType: 'EUC_2D',
    distance,
    coords: xy,
  };
}
