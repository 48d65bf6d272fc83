import type { SearchProblem } from './search-problem.js';
import type { Found, Incumbent, SearchInput, SearchState } from './search-state.js';

/** The parts of a task context the search loop uses (a no-op one runs it with no runtime at all). */
export interface LoopContext {
  shouldMigrate(): boolean;
  potentialSplit(): boolean;
  getVar<T>(name: string): T | undefined;
  setVar<T>(name: string, value: T): void;
}

/** How often (in expanded nodes) the loop looks at the shared incumbent or the `found` flag. */
const SYNC_MASK = 63;

/**
 * The search loop of seed 000 Fig. 4: take the next open node, evaluate or branch, keep the
 * incumbent in sync with the cluster, offer a split point, and stop at a migration point when
 * asked. Returns 'stopped' when the task must hand over its state, 'done' when its part is over.
 */
export function searchLoop<N, I>(problem: SearchProblem<N, I>, state: SearchState<N>, input: SearchInput<I>, ctx: LoopContext): 'done' | 'stopped' {
  const inst = input.instance;
  const open = state.open;
  let tick = 0;
  if (problem.kind === 'optimise') {
    const min = problem.sense === 'min';
    const better = (a: number, b: number | null) => b === null || (min ? a < b : a > b);
    // Start from the job's bound too: a task split off another (its own best still null) would otherwise
    // propose worse values, and prune nothing, until its first sync.
    const jobBound = ctx.getVar<Incumbent>('incumbent')?.value ?? null;
    let incumbent = jobBound !== null && better(jobBound, state.bestValue) ? jobBound : state.bestValue;
    // The task's own best goes out only if it beats the job's.
    if (state.bestValue !== null && better(state.bestValue, jobBound)) ctx.setVar<Incumbent>('incumbent', { value: state.bestValue, solution: state.best });
    while (open.length > 0) {
      if (ctx.shouldMigrate()) return 'stopped';
      if ((++tick & SYNC_MASK) === 0) {
        const shared = ctx.getVar<Incumbent>('incumbent');
        if (shared !== undefined && better(shared.value, incumbent)) incumbent = shared.value;
      }
      const node = open.pop()!;
      state.searchNodes++;
      const value = problem.objective(node, inst);
      if (value !== undefined) {
        if (better(value, state.bestValue) && better(value, incumbent)) {
          state.bestValue = value;
          state.best = problem.solutionOf(node, inst);
          incumbent = value;
          // With its solution: once others prune by this value, the solution must not depend on this run counting.
          ctx.setVar<Incumbent>('incumbent', { value, solution: state.best });
        }
        continue;
      }
      // Prune: nothing below this node can beat the incumbent.
      if (!input.noPrune && incumbent !== null && !better(problem.bound(node, inst), incumbent)) continue;
      pushChildren(open, problem.children(node, inst));
      ctx.potentialSplit();
    }
    return 'done';
  }
  if (problem.kind === 'decide') {
    while (open.length > 0) {
      if (ctx.shouldMigrate()) return 'stopped';
      if ((++tick & SYNC_MASK) === 0 && ctx.getVar<Found>('found')) {
        open.length = 0; // found elsewhere: the rest of this task's work is cancelled
        break;
      }
      const node = open.pop()!;
      state.searchNodes++;
      if (problem.isSolution(node, inst)) {
        state.count = 1;
        state.best = problem.solutionOf(node, inst);
        ctx.setVar<Found>('found', { solution: state.best });
        open.length = 0;
        break;
      }
      pushChildren(open, problem.children(node, inst));
      ctx.potentialSplit();
    }
    return 'done';
  }
  while (open.length > 0) {
    if (ctx.shouldMigrate()) return 'stopped';
    const node = open.pop()!;
    state.searchNodes++;
    if (problem.isSolution(node, inst)) state.count++;
    pushChildren(open, problem.children(node, inst));
    ctx.potentialSplit();
  }
  return 'done';
}

/** Pushes so that the first child is explored first (depth-first). */
function pushChildren<N>(open: N[], children: N[]): void {
  for (let i = children.length - 1; i >= 0; i--) open.push(children[i]!);
}

/** A context that does nothing: the loop then runs as a plain sequential solver. */
export const NO_RUNTIME: LoopContext = {
  shouldMigrate: () => false,
  potentialSplit: () => false,
  getVar: () => undefined,
  setVar: () => undefined,
};
