import type { WorkerEvent } from '../worker/worker-pool.js';

/** What a worker reports about one task (everything but `ready`). */
type TaskEvent = Extract<WorkerEvent, { taskId: string }>;

/** The reports after which a run is over on its worker. */
const ENDS = new Set<WorkerEvent['type']>(['done', 'migrated', 'failed', 'cancelled']);

/**
 * Tasks a node started before its claim on them settled. An offered task (a steal's answer, a
 * migration) starts at once on an idle worker, so the claim's round trip to the coordination service
 * does not leave that worker idle; what the run reports — children, checkpoints, its completion, its
 * messages, its global-variable proposals — is held here until the claim is known, then handed on in
 * order (claimed) or dropped (refused: the sender took the task back, and only its run counts). A bound
 * proposed by a run that does not count could otherwise keep the run that does from recording the
 * solution behind it.
 */
export class EarlyStarts {
  private readonly held = new Map<string, TaskEvent[]>();
  /** Refused runs still going on their worker: their reports are dropped until their end. */
  private readonly refused = new Set<string>();

  begin(taskId: string): void {
    this.held.set(taskId, []);
  }

  /**
   * Takes a worker's report if it belongs to an early start: 'held' (claim pending), 'dropped' (claim
   * refused), 'refused-end' (the last report of a refused run: the runner forgets the task). Else 'pass'.
   */
  intercept(ev: WorkerEvent): 'pass' | 'held' | 'dropped' | 'refused-end' {
    if (!('taskId' in ev)) return 'pass';
    const held = this.held.get(ev.taskId);
    if (held) {
      held.push(ev);
      return 'held';
    }
    if (!this.refused.has(ev.taskId)) return 'pass';
    if (!ENDS.has(ev.type)) return 'dropped';
    this.refused.delete(ev.taskId);
    return 'refused-end';
  }

  /**
   * The claim settled. Claimed: the held reports, to be handled now in order. Refused: whether the run is
   * over already (else it must be stopped where it runs, and its later reports are dropped).
   */
  settle(taskId: string, claimed: boolean): { replay: TaskEvent[]; over: boolean } {
    const held = this.held.get(taskId) ?? [];
    this.held.delete(taskId);
    if (claimed) return { replay: held, over: false };
    const over = held.some((ev) => ENDS.has(ev.type));
    if (!over) this.refused.add(taskId);
    return { replay: [], over };
  }
}
