/**
 * Result contributions as committed in the ledger's transaction markers, and the final fold.
 * A task's contribution is its reducer's partial value; for an ordered reducer it is a list of
 * [key, value] pairs; a task that failed under the 'collect' policy contributes a failure mark.
 */
import type { TaskFailure } from '../job/outcome.js';
import type { ResultReducer } from '../worker/task.js';

const FAILED = 'tidepool.failed-task';


/** The contribution of a task that failed for good under the 'collect' failure policy. */
export function failedContribution(task: string, error: string): unknown {
  return { [FAILED]: { task, error } satisfies TaskFailure };
}

function failureOf(contribution: unknown): TaskFailure | undefined {
  if (typeof contribution !== 'object' || contribution === null || !(FAILED in contribution)) return undefined;
  return (contribution as Record<string, TaskFailure>)[FAILED];
}

type Key = number | string;

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1; // numbers before strings
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Folds every committed contribution into the job's result. Unordered reducers fold in arrival
 * order (no defined order: combine must be associative and commutative); ordered reducers fold
 * every value in key order, so the result is bit-identical however the work was split and moved.
 */
export function foldContributions(reducer: ResultReducer<unknown>, contributions: Iterable<unknown>): { value: unknown; failures: TaskFailure[] } {
  const failures: TaskFailure[] = [];
  if (!reducer.ordered) {
    let value = reducer.initial();
    for (const c of contributions) {
      const failed = failureOf(c);
      if (failed) failures.push(failed);
      else if (c !== undefined) value = reducer.combine(value, c);
    }
    return { value, failures };
  }
  const pairs: Array<[Key, unknown]> = [];
  for (const c of contributions) {
    const failed = failureOf(c);
    if (failed) failures.push(failed);
    else if (Array.isArray(c)) pairs.push(...(c as Array<[Key, unknown]>));
  }
  pairs.sort((a, b) => compareKeys(a[0], b[0]));
  let value = reducer.initial();
  for (const [, v] of pairs) value = reducer.combine(value, v);
  failures.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  return { value, failures };
}
