import { readFileSync } from 'node:fs';
import type { TaskRef } from '../../runtime/worker/task.js';
import { parseDimacs, validateClique, type Graph } from './clique/dimacs.js';
import { maxCliqueProblem } from './clique/max-clique.js';
import { InputError } from './input-error.js';
import { parseKnapsack, type KnapsackInstance } from './knapsack/knapsack-format.js';
import { knapsackProblem } from './knapsack/knapsack.js';
import { nqueensProblem } from './nqueens/nqueens.js';
import type { SearchProblem, SearchResult } from './search-problem.js';
import { tspProblem } from './tsp/tsp.js';
import { parseTsplib, type TspInstance } from './tsp/tsplib.js';
import { randomEuclideanInstance, tourLength, validateTour } from './tsp/tsp-tours.js';

/** The problem modules by their built-in names: each node loads its own installation's copy (runtime/worker/builtin-code.ts). */
const moduleRef = (name: string): TaskRef => ({ module: `builtin:${name}`, export: 'default' });

/** What `tidepool solve` reports for a solved instance. */
export interface Report {
  objective: number;
  /** TSP: tour as 1-based TSPLIB city numbers from city 1; clique: vertices; knapsack: items; n-queens: null. */
  solution: unknown;
  /** Independently re-computed objective of the solution (null when there is none to check). */
  verified: boolean | null;
  detail?: string;
}

export interface Application<I> {
  name: string;
  ref: TaskRef;
  problem: SearchProblem<unknown, I>;
  /** Reads the instance named on the command line (a file, or a generator spec); throws InputError. */
  load(input: string): I;
  /** Describes the instance in a few words. */
  describe(instance: I): string;
  /** Turns the search result into the reported objective and solution, re-validated independently. */
  report(instance: I, result: SearchResult): Report;
}

const tsp: Application<TspInstance> = {
  name: 'tsp',
  ref: moduleRef('tsp'),
  problem: tspProblem as unknown as SearchProblem<unknown, TspInstance>,
  load(input) {
    const random = /^random:(\d+)(?::(\d+))?$/.exec(input);
    if (random) {
      const n = Number(random[1]);
      if (n < 3 || n > 200) throw new InputError(input, undefined, `random instances need 3 to 200 cities, not ${n}`);
      return randomEuclideanInstance(n, Number(random[2] ?? 1));
    }
    return parseTsplib(readInput(input), input);
  },
  describe: (t) => `${t.name}: ${t.dimension} cities (${t.edgeWeightType})`,
  report(t, r) {
    const tour = (r.solution as number[] | null) ?? [];
    const problem = validateTour(t, tour);
    const length = problem === null ? tourLength(t, tour) : NaN;
    return {
      objective: r.value ?? NaN,
      solution: tour.map((c) => c + 1),
      verified: problem === null && length === r.value,
      ...(problem ? { detail: problem } : {}),
    };
  },
};

const nqueens: Application<{ n: number }> = {
  name: 'nqueens',
  ref: moduleRef('nqueens'),
  problem: nqueensProblem as unknown as SearchProblem<unknown, { n: number }>,
  load(input) {
    const n = Number(input);
    if (!Number.isInteger(n) || n < 1 || n > 20) throw new InputError(input, undefined, 'n-queens takes the board size, a whole number from 1 to 20');
    return { n };
  },
  describe: (q) => `${q.n}×${q.n} board`,
  report: (_q, r) => ({ objective: r.count, solution: null, verified: null }),
};

const clique: Application<Graph> = {
  name: 'clique',
  ref: moduleRef('clique'),
  problem: maxCliqueProblem as unknown as SearchProblem<unknown, Graph>,
  load: (input) => parseDimacs(readInput(input), input),
  describe: (g) => `${g.name}: ${g.n} vertices, ${g.edges} edges`,
  report(g, r) {
    const vertices = (r.solution as number[] | null) ?? [];
    const problem = validateClique(g, vertices);
    return {
      objective: r.value ?? 0,
      solution: vertices.map((v) => v + 1),
      verified: problem === null && vertices.length === r.value,
      ...(problem ? { detail: problem } : {}),
    };
  },
};

const knapsack: Application<KnapsackInstance> = {
  name: 'knapsack',
  ref: moduleRef('knapsack'),
  problem: knapsackProblem as unknown as SearchProblem<unknown, KnapsackInstance>,
  load: (input) => parseKnapsack(readInput(input), input),
  describe: (k) => `${k.name}: ${k.values.length} items, capacity ${k.capacity}`,
  report(k, r) {
    const items = (r.solution as number[] | null) ?? [];
    const weight = items.reduce((w, i) => w + k.weights[i]!, 0);
    const value = items.reduce((v, i) => v + k.values[i]!, 0);
    const distinct = new Set(items).size === items.length;
    const ok = distinct && weight <= k.capacity && value === r.value;
    return {
      objective: r.value ?? 0,
      solution: items.map((i) => i + 1),
      verified: ok,
      ...(ok ? {} : { detail: `items weigh ${weight} (capacity ${k.capacity}) and are worth ${value}` }),
    };
  },
};

export const APPLICATIONS: Record<string, Application<never>> = {
  tsp: tsp as unknown as Application<never>,
  clique: clique as unknown as Application<never>,
  knapsack: knapsack as unknown as Application<never>,
  nqueens: nqueens as unknown as Application<never>,
};

function readInput(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(file, undefined, `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
