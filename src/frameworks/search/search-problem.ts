/**
 * What an application supplies to the search framework (seed 000 §4): its node type and how to
 * branch, bound and evaluate. The framework supplies the task type, splitting of the open-node
 * list, migration, sharing of the incumbent through a global variable, and termination.
 */
export type SearchKind = 'enumerate' | 'decide' | 'optimise';

interface ProblemBase<N, I> {
  /** Stable name (shown in results and logs). */
  name: string;
  /** The root node for an input. */
  root(input: I): N;
  /** The children of a node, in the order they should be explored (first = explored first). */
  children(node: N, input: I): N[];
}

/** Count (or find all) nodes that are solutions, e.g. n-queens. */
export interface EnumerationProblem<N, I> extends ProblemBase<N, I> {
  kind: 'enumerate';
  isSolution(node: N, input: I): boolean;
}

/** Stop at the first solution found anywhere in the cluster. */
export interface DecisionProblem<N, I> extends ProblemBase<N, I> {
  kind: 'decide';
  isSolution(node: N, input: I): boolean;
  /** The solution a node stands for, as JSON data (it is published as the job's `found` variable). */
  solutionOf(node: N, input: I): unknown;
}

/** Branch-and-bound with a shared incumbent. */
export interface OptimisationProblem<N, I> extends ProblemBase<N, I> {
  kind: 'optimise';
  sense: 'min' | 'max';
  /** The objective of a complete solution, or undefined if `node` is not one. */
  objective(node: N, input: I): number | undefined;
  /** An optimistic bound on every solution below `node` (a lower bound when minimising). */
  bound(node: N, input: I): number;
  /** The solution a complete node stands for, as JSON data (it is published with its value as the job's incumbent). */
  solutionOf(node: N, input: I): unknown;
  /** An optional starting incumbent (e.g. a heuristic solution), used as the first bound. */
  initial?(input: I): { value: number; solution: unknown } | undefined;
}

/** A search problem of any of the three kinds (`defineSearch` turns it into a task type). */
export type SearchProblem<N, I> = EnumerationProblem<N, I> | DecisionProblem<N, I> | OptimisationProblem<N, I>;

/** The outcome of a search, combined across tasks. */
export interface SearchResult {
  kind: SearchKind;
  /** Best objective (optimise), or null. */
  value: number | null;
  /** The best / first solution found, or null. */
  solution: unknown;
  /** Solutions counted (enumerate), or 1/0 (decide). */
  count: number;
  /** Search-tree nodes expanded. */
  searchNodes: number;
}
