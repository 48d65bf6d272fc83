/**
 * The resource manager on an embedded cluster of 4 nodes: two malleable prime-counting jobs. The
 * first takes all 4 nodes; when the second arrives, equipartition shrinks the first to 2 (its nodes
 * drain, their tasks move) and launches the second on the freed nodes only after they have left.
 *
 *   npx tsx examples/malleable-manager.ts [N]
 */
import { awaitOutcome, Cluster, taskPoolJob } from '../src/index.js';
import { ResourceManager, submitManagedJob } from '../src/frameworks/malleable/index.js';

const n = Number(process.argv[2] ?? 1_000_000);
const countPrimes = { module: new URL('./tasks/count-primes.ts', import.meta.url).href, export: 'default' };
const cluster = await Cluster.embedded({ nodes: 4, workers: 1 });
const manager = new ResourceManager(cluster.coordination, { id: 'example', policy: 'equipartition', tGapMs: 0 });
const events: Array<{ type: string; job: string; nodes: number }> = [];
const launched = new Promise<void>((resolve) => manager.on('event', (e) => {
  events.push({ type: e.type, job: e.job, nodes: e.nodes.length });
  if (e.type === 'launch') resolve();
}));
try {
  await manager.start();
  const first = await submitManagedJob(cluster.coordination, { ...taskPoolJob(countPrimes, { lo: 0, hi: n, found: 0 }), secret: cluster.secret!, flexibility: 'malleable', minNodes: 1, maxNodes: 4 });
  await launched; // the first job runs on all 4 nodes
  const second = await submitManagedJob(cluster.coordination, { ...taskPoolJob(countPrimes, { lo: 0, hi: n / 2, found: 0 }), secret: cluster.secret!, flexibility: 'malleable', minNodes: 1, maxNodes: 4 });
  const outcomes = await Promise.all([first, second].map((j) => awaitOutcome(cluster.coordination, j.id)));
  const name = (id: string) => (id === first.id ? 'first' : 'second');
  process.stdout.write(`${JSON.stringify({ primes: outcomes.map((o) => (o.status === 'done' ? o.value : o.status)), events: events.map((e) => `${e.type} ${name(e.job)} ${e.nodes}`) })}\n`);
} finally {
  await manager.stop();
  await cluster.close();
}
