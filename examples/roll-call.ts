/**
 * Runs a job of a kind of its own that is not built on the task pool (examples/kinds/roll-call.ts) on
 * an embedded cluster of three nodes, and prints the roll its leader ends the job with.
 *
 *   npx tsx examples/roll-call.ts
 */
import { Cluster } from '../src/index.js';

const cluster = await Cluster.embedded({ nodes: 3, workers: 1 });
try {
  const job = await cluster.submitJob({
    kind: { module: new URL('./kinds/roll-call.ts', import.meta.url).href, export: 'default' },
    kindSpec: { question: 'who is here?' },
    label: 'roll call',
    nodes: 3,
  });
  console.log(JSON.stringify(await job.result()));
} finally {
  await cluster.close();
}
