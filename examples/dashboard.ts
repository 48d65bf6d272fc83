/**
 * Watch a computation live: an embedded cluster with the tidepool dashboard and Prometheus metrics
 * served from your own program (what `tidepool monitor` does for a ZooKeeper cluster).
 *
 *   npx tsx examples/dashboard.ts [N] [--stay]
 *
 * Counts the primes below N (default 5·10^6) on 2 nodes, adds a third node a moment later, and
 * prints one JSON line: the dashboard URL, the count, and what the monitor saw. With --stay the
 * dashboard stays up until Ctrl-C.
 */
import { Cluster } from '../src/index.js';
import { ClusterMonitor, startDashboard } from '../src/dashboard/index.js';

const n = Number(process.argv[2] ?? 5_000_000);
const cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 250 });
const monitor = new ClusterMonitor(cluster.coordination, { intervalMs: 250 });
await monitor.start();
const dashboard = await startDashboard(monitor, { port: 0 });
process.stderr.write(`dashboard: ${dashboard.url}  metrics: ${new URL('metrics', dashboard.url).href}\n`);

let mostNodes = 0;
monitor.on((snapshot) => (mostNodes = Math.max(mostNodes, snapshot.point.activeNodes)));
const job = await cluster.submit({ module: new URL('./tasks/count-primes.ts', import.meta.url).href, export: 'default' }, { lo: 0, hi: n, found: 0 });
await cluster.addNodes(1);
await cluster.scale(job.id, 3); // the new node joins the running job and steals work
const primes = await job.result<number>();
await monitor.tick();
const seen = monitor.snapshot!.jobs.find((j) => j.id === job.id)!;
console.log(JSON.stringify({ dashboard: dashboard.url, primes, job: { state: seen.state, tasksDone: seen.tasksDone }, mostNodesAtOnce: mostNodes }));

if (process.argv.includes('--stay')) await new Promise((resolve) => process.once('SIGINT', resolve));
await dashboard.close();
await monitor.stop();
await cluster.close();
