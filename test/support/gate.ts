/**
 * Test support: the gate of the test applications that hold their tasks (held-compositions, probe-task
 * with `hold`): they finish only once the job's `go` variable is 1, so a test can act on a job that is
 * surely still running, then let it end.
 */
import { GlobalVariables } from '../../src/coord/recipes/global-variables.js';
import type { CoordClient } from '../../src/coord/types.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';

export async function openGate(client: CoordClient, jobId: string): Promise<void> {
  const vars = new GlobalVariables(client, jobPaths(jobId).vars);
  await vars.define('go', { rule: 'max' });
  await vars.setVar('go', 1);
}
