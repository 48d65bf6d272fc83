/**
 * A job's memory budget for its task pool on one node (JobOptions.poolMemoryBytes): what the tasks a
 * node holds are reckoned to take — each task a fixed cost (POOL_TASK_BYTES, what the pool's table,
 * snapshot and order take for a task; bench/memory-per-task.ts measures it) plus its encoded state, the
 * running mean of the states spawned here — must stay within it. It counts every task the node holds,
 * however it came: spawned or split off here, stolen, migrated or placed here, or recovered from a node
 * that died. New tasks spawned here that would take the pool over it are refused, and the job fails with
 * a message naming the budget, the job and the node (a job whose fan outgrows its nodes' memory ends with
 * that reason rather than an out-of-memory death); tasks that would come from elsewhere are not taken
 * (a thief over it does not steal, an offer is refused and stays with its sender, a recovered task is
 * handed on to another member when there is one) — never lost.
 */

/** What a task held in a node's pool is reckoned to take besides its encoded state (bytes). */
export const POOL_TASK_BYTES = 512;

export class PoolBudget {
  /** Running mean of the encoded size of the states recorded here (bytes per task). */
  private meanStateBytes = 0;
  private seen = 0;

  constructor(readonly bytes: number, private readonly jobId: string, private readonly nodeId: string) {}

  /**
   * `held` tasks are in the pool's table and `count` new ones arrive, `stateBytes` encoded together
   * (undefined when they came as states, not encoded): undefined if they fit, else why not.
   */
  admit(held: number, count: number, stateBytes: number | undefined): string | undefined {
    if (stateBytes !== undefined && count > 0) {
      this.seen += count;
      this.meanStateBytes += (stateBytes / count - this.meanStateBytes) * (count / this.seen);
    }
    const over = this.over(held, count);
    return over && `job ${this.jobId}: ${over}; `
      + 'the job is refused rather than left to run out of memory: give it a larger budget, more nodes, or spawn fewer tasks at once';
  }

  /**
   * Whether `count` more tasks fit beside the `held` ones (at the mean state size seen so far; nothing is
   * learnt): undefined if they do, else what they would take, naming the node and the budget.
   */
  over(held: number, count: number): string | undefined {
    const perTask = POOL_TASK_BYTES + Math.round(this.meanStateBytes);
    const total = held + count;
    if (total * perTask <= this.bytes) return undefined;
    return `node ${this.nodeId}'s task pool would hold ${total} tasks, about ${total * perTask} bytes `
      + `(${perTask} bytes a task), over the job's pool memory budget of ${this.bytes} bytes (poolMemoryBytes)`;
  }
}

/** Checks a budget as a submitter gives it; returns what is wrong, or undefined. */
export function poolBudgetError(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return Number.isSafeInteger(value) && (value as number) >= POOL_TASK_BYTES
    ? undefined
    : `poolMemoryBytes must be a whole number of bytes ≥ ${POOL_TASK_BYTES} (one task's share), not ${JSON.stringify(value)}`;
}
