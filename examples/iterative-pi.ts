/**
 * Runs the π application (examples/iterative/pi.ts) on an embedded cluster of two nodes with each
 * balancing strategy, and checks that every strategy gives the same bits as one thread does.
 *
 *   npx tsx examples/iterative-pi.ts [ITERATIONS]
 */
import { Cluster } from '../src/index.js';
import { iterateSequentially, runIterative } from '../src/frameworks/iterative/index.js';
import pi, { type Darts } from './iterative/pi.js';

const iterations = Number(process.argv[2] ?? 200_000);
const app = { module: new URL('./iterative/pi.ts', import.meta.url).href, export: 'default' };
const options = { iterations, params: { dartsPerIteration: 10 } };
const reference = iterateSequentially(pi, options).value;
const cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
try {
  for (const balance of ['ruper', 'steal', 'static'] as const) {
    const r = await runIterative<Darts, typeof options.params>(cluster, app, { ...options, balance });
    const estimate = (4 * r.value.inside) / r.value.thrown;
    const same = r.value.inside === reference.inside && r.value.thrown === reference.thrown;
    console.log(JSON.stringify({ balance, iterations: r.iterations, pi: estimate, error: Math.abs(estimate - Math.PI), sameAsOneThread: same }));
  }
} finally {
  await cluster.close();
}
