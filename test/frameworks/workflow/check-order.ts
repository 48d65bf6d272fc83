/**
 * Test support: every task of a traced run ran, and no task started before each of its parents had
 * ended (its input files existed). Times are the members' own clocks (performance timeOrigin + now,
 * all on this machine).
 */
import assert from 'node:assert/strict';
import type { WorkflowResult } from '../../../src/frameworks/workflow/workflow-kind.js';
import type { Workflow } from '../../../src/frameworks/workflow/workflow.js';

/** Returns how many dependencies were checked. */
export function checkOrder(wf: Workflow, result: WorkflowResult): number {
  const ends = new Map<number, number>();
  const starts = new Map<number, number>();
  for (const m of result.members) for (const [t, s, e] of m.trace) {
    starts.set(t, Math.min(starts.get(t) ?? Infinity, s));
    ends.set(t, Math.min(ends.get(t) ?? Infinity, e));
  }
  assert.equal(starts.size, wf.tasks.length, 'every task ran');
  let checked = 0;
  wf.tasks.forEach((task, t) => {
    for (const p of task.parents) {
      assert.ok(starts.get(t)! >= ends.get(p)!, `${task.id} started before its parent ${wf.tasks[p]!.id} ended`);
      checked++;
    }
  });
  return checked;
}
