import { defineTask, type TaskType } from '../../runtime/worker/task.js';
import type { SearchProblem, SearchResult } from './search-problem.js';
import { NO_RUNTIME, searchLoop } from './search-loop.js';
import { combineResults, emptyResult, mergeIncumbents, rootSearchState, withSearchVars, type Found, type SearchInput, type SearchState } from './search-state.js';

/**
 * Turns a search problem into a tidepool task type. Export the result from the problem's module
 * so every node can load it:
 *
 * ```ts
 * export default defineSearch(myProblem);
 * ```
 */
export function defineSearch<N, I>(problem: SearchProblem<N, I>): TaskType<SearchState<N>, SearchResult, SearchInput<I>> {
  const sense = problem.kind === 'optimise' ? problem.sense : undefined;
  return defineTask<SearchState<N>, SearchResult, SearchInput<I>>({
    name: problem.name,
    run(state, ctx) {
      if (searchLoop(problem, state, ctx.input, ctx) === 'stopped') return;
      ctx.emit(resultOf(problem, state));
    },
    // Hand over the oldest open node: the root of the largest unexplored subtree.
    split(state) {
      if (state.open.length < 2) return undefined;
      return { open: [state.open.shift()!], bestValue: null, best: null, count: 0, searchNodes: 0 };
    },
    result: { initial: () => emptyResult(problem.kind), combine: combineResults(sense), withVars: withSearchVars(sense) },
    vars: problem.kind === 'optimise' ? { incumbent: mergeIncumbents(problem.sense) } : problem.kind === 'decide' ? { found: keepFirst } : {},
  });
}

/** The first solution published stays (every member converges on the first write). */
const keepFirst = (current: Found): Found => current;

function resultOf<N, I>(problem: SearchProblem<N, I>, state: SearchState<N>): SearchResult {
  return { kind: problem.kind, value: state.bestValue, solution: state.best, count: state.count, searchNodes: state.searchNodes };
}

/** Solves on the current thread with no runtime at all: the baseline for speedups and overhead. */
export function solveSequentially<N, I>(problem: SearchProblem<N, I>, instance: I, opts: { noPrune?: boolean } = {}): SearchResult {
  const state = rootSearchState(problem, instance);
  searchLoop(problem, state, { instance, noPrune: opts.noPrune ?? false }, NO_RUNTIME);
  return resultOf(problem, state);
}
