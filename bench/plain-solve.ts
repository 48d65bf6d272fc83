/**
 * One plain sequential TSP solve of a random instance, timed from inside the process:
 * `bench/search.ts` runs two of these at once to measure what two cores of this machine
 * deliver to two independent solvers (the ceiling for any 2-worker efficiency).
 *
 *   npx tsx bench/plain-solve.ts N SEED [--no-prune]   → prints the seconds
 */
import { solveSequentially } from '../src/frameworks/search/define-search.js';
import { tspProblem } from '../src/frameworks/search/tsp/tsp.js';
import { randomEuclideanInstance } from '../src/frameworks/search/tsp/tsp-tours.js';

const [n, seed] = process.argv.slice(2, 4).map(Number);
const inst = randomEuclideanInstance(n!, seed!);
const t = performance.now();
solveSequentially(tspProblem, inst, { noPrune: process.argv.includes('--no-prune') });
console.log(((performance.now() - t) / 1000).toFixed(4));
