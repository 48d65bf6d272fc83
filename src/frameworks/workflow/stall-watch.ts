/**
 * The leader's watch against a run that can no longer make progress (no task running or ready on
 * any member and nothing changing, look after look): instead of waiting forever, the run fails
 * naming the tasks that wait and the files they wait for. Without I/O: it is given every member's
 * figures at each look (workflow-kind.ts looks every few seconds).
 */

/** What the watch needs from a member's report. */
export interface MemberProgress {
  node: string;
  running: number;
  ready: number;
  waiting: number;
  completed: number;
  recreated: number;
  retries: number;
  steals: number;
  stolenIn: number;
  dispatched: number;
  finished: number;
  /** A few of the tasks waiting on this member, in words: `task X waits for file F (written by task P, …)`. */
  waits: string[];
}

export class StallWatch {
  private last: string | undefined;
  private idleLooks = 0;

  /** `looks`: how many looks in a row must find the run idle and unchanged before it is declared stuck. */
  constructor(private readonly looks = 3) {}

  /**
   * One look. `members`: how many members the run has (a look missing one proves nothing).
   * Returns the error to fail the run with, or undefined.
   */
  observe(reports: MemberProgress[], members: number, tasks: number): string | undefined {
    const idle = reports.length >= members && reports.every((r) => r.running === 0 && r.ready === 0);
    const signature = JSON.stringify(reports.map((r) => [r.node, r.completed, r.recreated, r.retries, r.steals, r.stolenIn, r.dispatched, r.waiting, r.finished]));
    if (!idle || signature !== this.last) {
      this.last = signature;
      this.idleLooks = idle ? 1 : 0;
      return undefined;
    }
    if (++this.idleLooks < this.looks) return undefined;
    const finished = Math.max(0, ...reports.map((r) => r.finished));
    const waiting = reports.reduce((n, r) => n + r.waiting, 0);
    const waits = reports.flatMap((r) => r.waits.map((w) => `${w} (on ${r.node})`));
    const detail = waits.length > 0 ? `: ${waits.slice(0, 8).join('; ')}${waiting > waits.length ? `; and ${waiting - Math.min(8, waits.length)} more waiting` : ''}`
      : `; ${tasks - finished} tasks are neither done nor held by any member`;
    return `the run cannot make progress: no task is running or ready on any of ${reports.length} members and nothing changed over ${this.looks} looks; ${finished} of ${tasks} tasks done${detail}`;
  }

  reset(): void {
    this.last = undefined;
    this.idleLooks = 0;
  }
}
