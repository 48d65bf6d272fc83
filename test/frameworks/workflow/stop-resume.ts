/**
 * Test support: a run stopped mid-way and run again. The run is submitted, stopped (the `stop` control
 * request) once `after` tasks are journaled, and run again with the same options; the stopped run must
 * have ended stopped before the end, and the second must take what it finished as up to date and run
 * exactly the rest. Returns how many the stopped run finished and the second run's result.
 */
import assert from 'node:assert/strict';
import { Journal } from '../../../src/frameworks/workflow/journal.js';
import { runWorkflow, submitWorkflow, type RunWorkflowOptions } from '../../../src/frameworks/workflow/run-workflow.js';
import type { WorkflowResult } from '../../../src/frameworks/workflow/workflow-kind.js';
import type { Workflow } from '../../../src/frameworks/workflow/workflow.js';
import type { Cluster } from '../../../src/runtime/client/cluster.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { waitFor, withDeadline } from '../../support/wait.js';

export async function stopAndResume(cluster: Cluster, wf: Workflow, opts: RunWorkflowOptions, after = 8): Promise<{ before: number; resumed: WorkflowResult }> {
  const first = await submitWorkflow(cluster, wf, opts);
  await waitFor(() => Journal.scan(first.dir).completions.size >= after, `${after} tasks finished`, 120_000);
  assert.deepEqual(await requestJob(cluster.coordination, first.id, 'stop', null, { timeoutMs: 120_000 }), { stopped: true });
  assert.equal((await withDeadline(first.result<WorkflowResult>(), 'the stopped run', 60_000)).stopped, true);
  const before = Journal.scan(first.dir).completions.size;
  assert.ok(before < wf.tasks.length, 'stopped before the end');
  const resumed = await runWorkflow(cluster, wf, opts);
  assert.equal(resumed.upToDate, before, 'what the stopped run finished is up to date');
  assert.equal(resumed.tasks, wf.tasks.length - before, 'the rest ran');
  return { before, resumed };
}
