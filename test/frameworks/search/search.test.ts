/**
 * The search framework: skeletons (enumeration, decision, optimisation) sequentially and in
 * parallel on embedded clusters, checked against published counts and an independent exact solver.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseDimacs, validateClique } from '../../../src/frameworks/search/clique/dimacs.js';
import { maxCliqueProblem } from '../../../src/frameworks/search/clique/max-clique.js';
import { knapsackByDynamicProgramming, randomKnapsack } from '../../../src/frameworks/search/knapsack/knapsack-format.js';
import { knapsackProblem } from '../../../src/frameworks/search/knapsack/knapsack.js';
import { solveSequentially } from '../../../src/frameworks/search/define-search.js';
import { NQUEENS_SOLUTIONS } from '../../../src/frameworks/search/nqueens/known-counts.js';
import { nqueensProblem } from '../../../src/frameworks/search/nqueens/nqueens.js';
import type { SearchResult } from '../../../src/frameworks/search/search-problem.js';
import { rootSearchState } from '../../../src/frameworks/search/search-state.js';
import { tspProblem, type TspMatrix } from '../../../src/frameworks/search/tsp/tsp.js';
import { parseTsplib, randomEuclideanInstance, tourLength, validateTour } from '../../../src/frameworks/search/tsp/tsplib.js';
import { Cluster } from '../../../src/runtime/cluster.js';
import type { TaskRef } from '../../../src/runtime/task.js';
import { firstPlacement } from './decide-app.js';

const ref = (url: URL): TaskRef => ({ module: url.href, export: 'default' });
const TSP = ref(new URL('../../../src/frameworks/search/tsp/tsp.ts', import.meta.url));
const NQUEENS = ref(new URL('../../../src/frameworks/search/nqueens/nqueens.ts', import.meta.url));
const FIRST = ref(new URL('./decide-app.ts', import.meta.url));

/** Held–Karp dynamic programming: an exact TSP solver sharing no code with the search. */
function heldKarp(m: TspMatrix): number {
  const n = m.dimension;
  const full = 1 << (n - 1);
  const dp = new Float64Array(full * n).fill(Infinity);
  for (let j = 1; j < n; j++) dp[(1 << (j - 1)) * n + j] = m.distance[j]!;
  for (let mask = 1; mask < full; mask++) {
    for (let j = 1; j < n; j++) {
      const v = dp[mask * n + j]!;
      if (v === Infinity) continue;
      for (let k = 1; k < n; k++) {
        const bit = 1 << (k - 1);
        if (mask & bit) continue;
        const next = v + m.distance[j * n + k]!;
        if (next < dp[(mask | bit) * n + k]!) dp[(mask | bit) * n + k] = next;
      }
    }
  }
  let best = Infinity;
  for (let j = 1; j < n; j++) best = Math.min(best, dp[(full - 1) * n + j]! + m.distance[j * n]!);
  return best;
}

async function onCluster(taskRef: TaskRef, root: unknown, input: unknown, nodes: number, workers: number): Promise<SearchResult> {
  const cluster = await Cluster.embedded({ nodes, workers, progressIntervalMs: 0 });
  try {
    const job = await cluster.submit(taskRef, root, { input });
    return await job.result<SearchResult>();
  } finally {
    await cluster.close();
  }
}

describe('search framework', () => {
  it('enumeration: n-queens counts for n = 1…12 match OEIS A000170', () => {
    for (let n = 1; n <= 12; n++) assert.equal(solveSequentially(nqueensProblem, { n }).count, NQUEENS_SOLUTIONS[n], `n = ${n}`);
  });

  it('optimisation: TSP optima equal Held–Karp on random instances, tours re-validated', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const inst = randomEuclideanInstance(8 + (seed % 6), seed);
      const r = solveSequentially(tspProblem, inst);
      assert.equal(r.value, heldKarp(inst), `${inst.name}`);
      const tour = r.solution as number[];
      assert.equal(validateTour(inst, tour), null);
      assert.equal(tourLength(inst, tour), r.value);
    }
  });

  it('--no-prune explores a fixed tree: same search nodes every run, same optimum', () => {
    const inst = randomEuclideanInstance(8, 3);
    const a = solveSequentially(tspProblem, inst, { noPrune: true });
    const b = solveSequentially(tspProblem, inst, { noPrune: true });
    assert.equal(a.searchNodes, b.searchNodes);
    // Every path from city 1 is expanded: 1 + 7 + 7·6 + … + 7! nodes.
    let expected = 0;
    for (let k = 0, term = 1; k <= 7; k++) {
      expected += term;
      term *= 7 - k;
    }
    assert.equal(a.searchNodes, expected);
    assert.equal(a.value, heldKarp(inst));
  });

  it('in parallel (2 nodes × 1 worker): n-queens 11, TSP optimum, fixed work without pruning', { timeout: 120_000 }, async () => {
    const q = await onCluster(NQUEENS, rootSearchState(nqueensProblem, { n: 11 }), { instance: { n: 11 }, noPrune: false }, 2, 1);
    assert.equal(q.count, NQUEENS_SOLUTIONS[11]);
    const inst = randomEuclideanInstance(13, 7);
    const t = await onCluster(TSP, rootSearchState(tspProblem, inst), { instance: inst, noPrune: false }, 2, 1);
    assert.equal(t.value, heldKarp(inst));
    assert.equal(tourLength(inst, t.solution as number[]), t.value);
    const small = randomEuclideanInstance(9, 2);
    const fixed = await onCluster(TSP, rootSearchState(tspProblem, small), { instance: small, noPrune: true }, 2, 1);
    assert.equal(fixed.searchNodes, solveSequentially(tspProblem, small, { noPrune: true }).searchNodes, 'no node explored twice or lost');
  });

  it('decision: the first solution found stops the search cluster-wide', { timeout: 120_000 }, async () => {
    const r = await onCluster(FIRST, rootSearchState(firstPlacement, { n: 24 }), { instance: { n: 24 }, noPrune: false }, 2, 1);
    assert.ok(r.count >= 1, 'a placement was found');
    const cols = r.solution as number[];
    assert.equal(cols.length, 24);
    for (let i = 0; i < 24; i++) for (let j = i + 1; j < 24; j++) {
      assert.notEqual(cols[i], cols[j]);
      assert.notEqual(Math.abs(cols[i]! - cols[j]!), j - i);
    }
  });
});

describe('search applications on real instances', () => {
  const omega = JSON.parse(readFileSync(new URL('../../data/clique/omega.json', import.meta.url), 'utf8')) as Record<string, { omega: number }>;
  const graph = (name: string) => parseDimacs(readFileSync(new URL(`../../data/clique/${name}.clq`, import.meta.url), 'utf8'), `${name}.clq`);
  const CLIQUE = ref(new URL('../../../src/frameworks/search/clique/max-clique.ts', import.meta.url));
  const KNAPSACK = ref(new URL('../../../src/frameworks/search/knapsack/knapsack.ts', import.meta.url));

  it('maximum clique: the published clique number of every DIMACS test graph, clique re-validated', () => {
    for (const name of ['johnson8-2-4', 'MANN_a9', 'hamming6-4', 'johnson8-4-4', 'keller4', 'brock200_2', 'C125.9']) {
      const g = graph(name);
      const r = solveSequentially(maxCliqueProblem, g);
      assert.equal(r.value, omega[name]!.omega, name);
      assert.equal(validateClique(g, r.solution as number[]), null, `${name}: a real clique`);
      assert.equal((r.solution as number[]).length, r.value);
    }
  });

  it('maximum clique in parallel (2 nodes): keller4 and brock200_2', { timeout: 120_000 }, async () => {
    for (const name of ['keller4', 'brock200_2']) {
      const g = graph(name);
      const r = await onCluster(CLIQUE, rootSearchState(maxCliqueProblem, g), { instance: g, noPrune: false }, 2, 1);
      assert.equal(r.value, omega[name]!.omega, name);
      assert.equal(validateClique(g, r.solution as number[]), null);
    }
  });

  it('knapsack: branch-and-bound equals dynamic programming on random instances, sequentially and in parallel', { timeout: 120_000 }, async () => {
    for (let seed = 1; seed <= 10; seed++) {
      const k = randomKnapsack(30 + seed * 3, seed);
      const dp = knapsackByDynamicProgramming(k);
      const r = solveSequentially(knapsackProblem, k);
      assert.equal(r.value, dp.value, `seed ${seed}`);
      const items = r.solution as number[];
      assert.ok(items.reduce((w, i) => w + k.weights[i]!, 0) <= k.capacity);
      assert.equal(items.reduce((v, i) => v + k.values[i]!, 0), r.value);
    }
    const k = randomKnapsack(60, 99);
    const par = await onCluster(KNAPSACK, rootSearchState(knapsackProblem, k), { instance: k, noPrune: false }, 2, 1);
    assert.equal(par.value, knapsackByDynamicProgramming(k).value);
  });

  it('TSP: TSPLIB optima (GEO, EXPLICIT, ATT, EUC_2D), sequentially and in parallel', { timeout: 180_000 }, async () => {
    const optima = JSON.parse(readFileSync(new URL('../../data/tsplib/optima.json', import.meta.url), 'utf8')) as Record<string, { optimal_tour_length: number }>;
    for (const name of ['burma14', 'ulysses16', 'gr17', 'gr21', 'ulysses22', 'gr24', 'fri26', 'bayg29', 'bays29', 'dantzig42']) {
      const inst = parseTsplib(readFileSync(new URL(`../../data/tsplib/${name}.tsp`, import.meta.url), 'utf8'), `${name}.tsp`);
      const seq = solveSequentially(tspProblem, inst);
      assert.equal(seq.value, optima[name]!.optimal_tour_length, `${name} sequential`);
      const par = await onCluster(TSP, rootSearchState(tspProblem, inst), { instance: inst, noPrune: false }, 2, 1);
      assert.equal(par.value, optima[name]!.optimal_tour_length, `${name} parallel`);
      assert.equal(tourLength(inst, par.solution as number[]), par.value);
    }
  });
});
