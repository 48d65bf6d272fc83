/**
 * Runs a job of a custom kind (examples/kinds/greeting-pool.ts) on an embedded cluster of three
 * nodes, asks its leader for the greetings through the control channel, and prints the result.
 *
 *   npx tsx examples/job-kind.ts [N]
 */
import { Cluster, requestJob } from '../src/index.js';

const n = Number(process.argv[2] ?? 2_000_000);
const cluster = await Cluster.embedded({ nodes: 3, workers: 1 });
try {
  const job = await cluster.submit(
    { module: new URL('./tasks/budgeted-sum.ts', import.meta.url).href, export: 'default' },
    { lo: 0, hi: n },
    { kind: { module: new URL('./kinds/greeting-pool.ts', import.meta.url).href, export: 'default' }, nodes: 3 },
  );
  const greetings = await requestJob(cluster.coordination, job.id, 'greetings').catch((err: Error) => ({ error: err.message }));
  const sum = await job.result<number>();
  console.log(JSON.stringify({ sum, expected: (n * (n - 1)) / 2, greetingsAtLeader: greetings }));
} finally {
  await cluster.close();
}
