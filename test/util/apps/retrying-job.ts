/**
 * Test program: an embedded cluster runs a job whose leaves each fail once and are retried (the runtime
 * logs each retry at info, with the job, node and task as fields), and logs one line of its own at info.
 * Prints the job's result on stdout; what the logs wrote goes to stderr.
 */
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { log } from '../../../src/util/log.js';

const FLAKY = { module: new URL('../../runtime/apps/failure-policies.ts', import.meta.url).href, export: 'flaky' };

const cluster = await Cluster.embedded({ nodes: 1, workers: 1 });
try {
  const job = await cluster.submit(FLAKY, { index: 0, leaves: 5, fan: true });
  log.info('test', 'the job ran');
  process.stdout.write(`${await job.result<number>()}\n`);
} finally {
  await cluster.close();
}
