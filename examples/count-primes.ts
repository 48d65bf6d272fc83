/**
 * Count the primes below N on an embedded tidepool cluster (no external service):
 *
 *   npx tsx examples/count-primes.ts [N] [nodes] [workers-per-node]
 *
 * Prints {"primes": …, "seconds": …}. π(10^6) = 78498, π(10^7) = 664579.
 */
import { Cluster } from '../src/index.js';

const n = Number(process.argv[2] ?? 1_000_000);
const nodes = Number(process.argv[3] ?? 2);
const workers = Number(process.argv[4] ?? 1);

const cluster = await Cluster.embedded({ nodes, workers });
const started = performance.now();
const job = await cluster.submit(
  { module: new URL('./tasks/count-primes.ts', import.meta.url).href, export: 'default' },
  { lo: 0, hi: n, found: 0 },
);
const primes = await job.result<number>();
console.log(JSON.stringify({ primes, seconds: (performance.now() - started) / 1000 }));
await cluster.close();
