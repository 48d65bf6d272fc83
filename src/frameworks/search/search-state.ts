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
