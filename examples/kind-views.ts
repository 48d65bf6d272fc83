/**
 * A job kind's views over time on the dashboard: an iterative job (π by Monte Carlo) on an embedded
 * cluster of two nodes with two threads each, watched by the dashboard served from this program.
 *
 *   npx tsx examples/kind-views.ts [ITERATIONS] [--stay]
 *
 * Open the printed URL: under "Job kinds", the job's figures over time (speed per process, speed per
 * thread, iterations done) and its finish times per thread and process. Prints one JSON line: what the
 * dashboard keeps of the job (figure samples, chart families, event lists). With --stay the dashboard
 * stays up until Ctrl-C.
 */
import { Cluster } from '../src/index.js';
import { ClusterMonitor, startDashboard } from '../src/dashboard/index.js';
import { runIterative } from '../src/frameworks/iterative/index.js';

const iterations = Number(process.argv[2] ?? 3_000_000);
const cluster = await Cluster.embedded({ nodes: 2, workers: 2, progressIntervalMs: 250 });
const monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 250 });
await monitor.start();
const dashboard = await startDashboard(monitor, { port: 0 });
process.stderr.write(`dashboard: ${dashboard.url}\n`);

const app = { module: new URL('./iterative/pi.ts', import.meta.url).href, export: 'default' };
const r = await runIterative<{ thrown: number; inside: number }, { dartsPerIteration: number }>(cluster, app, { iterations, params: { dartsPerIteration: 10 }, balance: 'ruper' });
await monitor.tick();
const hello = monitor.hello();
const job = hello.figures.at(-1)!;
const families = [...new Set(job.samples.flatMap((s) => Object.values(s.nodes).flatMap((f) => Object.keys(f).map((k) => (k.includes('.') ? `${k.slice(0, k.indexOf('.'))}.*` : k)))))].sort();
console.log(JSON.stringify({
  dashboard: dashboard.url, pi: (4 * r.value.inside) / r.value.thrown,
  job: { kind: job.kind, samples: job.samples.length, families },
  events: hello.events.map((l) => ({ origin: l.origin, list: l.list, events: l.events.length })),
}));

if (process.argv.includes('--stay')) await new Promise((resolve) => process.once('SIGINT', resolve));
await dashboard.close();
await monitor.stop();
await cluster.close();
