/**
 * A program that never closes its embedded cluster (process-hold.test.ts): it must end by itself once
 * its jobs are done, and not before. `submit`: a job through Cluster.submit; `direct`: a job created on
 * the coordination service without Cluster.submit (as the resource manager creates them); `idle`: no job;
 * `closed`: a job, then close() as a program should.
 */
import { Cluster } from '../../../src/index.js';
import { awaitOutcome } from '../../../src/runtime/job/outcome.js';
import { submitJob } from '../../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../../src/runtime/pool/task-pool-ref.js';

const mode = process.argv[2];
const task = { module: new URL('../../../examples/tasks/count-primes.ts', import.meta.url).href, export: 'default' };
const root = { lo: 0, hi: 200_000, found: 0 };
const cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
if (mode === 'submit' || mode === 'closed') {
  const job = await cluster.submit(task, root);
  console.log(JSON.stringify({ primes: await job.result() }));
  if (mode === 'closed') await cluster.close();
} else if (mode === 'direct') {
  const spec = await submitJob(cluster.coordination, { ...taskPoolJob(task, root), nodes: 2, secret: cluster.secret! });
  const outcome = await awaitOutcome(cluster.coordination, spec.id);
  console.log(JSON.stringify({ primes: outcome.status === 'done' ? outcome.value : outcome.status }));
} else if (mode !== 'idle') {
  throw new Error(`unknown mode ${mode}`);
}
