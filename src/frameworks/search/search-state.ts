import type { SearchKind, SearchProblem, SearchResult } from './search-problem.js';

/** A search task's state: its open nodes and what it found so far (all plain data, so it can move). */
export interface SearchState<N> {
  open: N[];
  bestValue: number | null;
  best: unknown;
  count: number;
  searchNodes: number;
}

/** What every task of a search job shares (TaskContext.input). */
export interface SearchInput<I> {
  instance: I;
  /** Disable pruning: a fixed amount of work (the seed's scalability measurements). */
  noPrune: boolean;
}

export function emptyResult(kind: SearchKind): SearchResult {
  return { kind, value: null, solution: null, count: 0, searchNodes: 0 };
}

/** Combines two partial results: best value (ties keep the first), counts and effort add up. */
export function combineResults(sense: 'min' | 'max' | undefined) {
  return (a: SearchResult, b: SearchResult): SearchResult => {
    let value = a.value;
    let solution = a.solution;
    if (b.value !== null && (value === null || (sense === 'max' ? b.value > value : b.value < value))) {
      value = b.value;
      solution = b.solution;
    } else if (value === null && solution === null && b.solution !== null) {
      solution = b.solution;
    }
    return { kind: a.kind, value, solution, count: a.count + b.count, searchNodes: a.searchNodes + b.searchNodes };
  };
}

/**
 * The job's incumbent (the `incumbent` global variable of an optimisation): the best value with its solution,
 * published together, so the solution is as durable as the bound that prunes everyone else's search.
 */
export interface Incumbent {
  value: number;
  solution: unknown;
}

/** The decision skeleton's `found` variable: the first solution published (later ones do not replace it). */
export interface Found {
  solution: unknown;
}

/** Merges incumbents by value; a tie keeps the current one (so merging is monotone and idempotent). */
export function mergeIncumbents(sense: 'min' | 'max') {
  return (current: Incumbent, proposed: Incumbent): Incumbent =>
    (sense === 'min' ? proposed.value < current.value : proposed.value > current.value) ? proposed : current;
}

/**
 * The job's result with its variables: a solution published by a run that did not count (its node crashed
 * before the task's completion was written) is not found again by the re-run, which the published value
 * prunes, so the result takes it from the variable when the counted runs found nothing as good.
 */
export function withSearchVars(sense: 'min' | 'max' | undefined) {
  return (result: SearchResult, vars: Readonly<Record<string, unknown>>): SearchResult => {
    const incumbent = vars.incumbent as Incumbent | undefined;
    if (sense && incumbent && (result.value === null || (sense === 'min' ? incumbent.value < result.value : incumbent.value > result.value))) {
      return { ...result, value: incumbent.value, solution: incumbent.solution };
    }
    const found = vars.found as Found | undefined;
    if (result.kind === 'decide' && found && result.count === 0) return { ...result, count: 1, solution: found.solution };
    return result;
  };
}

/** The root task's state for a problem instance. */
export function rootSearchState<N, I>(problem: SearchProblem<N, I>, instance: I): SearchState<N> {
  const initial = problem.kind === 'optimise' ? problem.initial?.(instance) : undefined;
  return {
    open: [problem.root(instance)],
    bestValue: initial ? initial.value : null,
    best: initial ? initial.solution : null,
    count: 0,
    searchNodes: 0,
  };
}
