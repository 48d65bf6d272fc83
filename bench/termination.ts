/**
 * Termination detection (seed 000 §3.5 and the ZooKeeper paragraph of §5): one transaction per
 * completed task (the seed's Algorithm 2) against batched transactions, on the embedded backend
 * and on a 3-server ZooKeeper ensemble on loopback. Reports throughput, transactions, the
 * read/write ratio and the share of retried transactions, and the batched/per-task speedup.
 *
 *   npx tsx bench/termination.ts [--tasks N] [--clients K]
 *
 * Writes bench/results/termination.json.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect } from '../src/coord/connect.js';
import { TaskTracker, TerminationList } from '../src/coord/recipes/termination-detection.js';
import type { CoordClient } from '../src/coord/types.js';
import { Rng } from '../src/util/rng.js';
import { randomSplitTree } from '../test/support/split-tree.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '4000' }, clients: { type: 'string', default: '3' } } });
const TASKS = Number(values.tasks);
const CLIENTS = Number(values.clients);

interface Result {
  backend: string;
  mode: string;
  tasks: number;
  seconds: number;
  tasksPerSecond: number;
  transactions: number;
  reads: number;
  writes: number;
  readWriteRatio: number;
  retriedPercent: number;
}

async function run(backend: string, open: () => Promise<CoordClient>, maxBatch: number): Promise<Result> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, open));
  const coordClient = await open();
  const base = `/bench/termination-${Date.now()}-${maxBatch}`;
  const list = new TerminationList(coordClient, base);
  await list.init('t0');
  const finished = list.finished();
  const rng = new Rng(42);
  const tree = randomSplitTree(rng, TASKS);
  const trackers = clients.map((c) => new TaskTracker(c, base, { maxBatch }));
  // Completion order: children before parents half of the time, as stealing produces.
  const order = [...tree.keys()].sort(() => rng.next() - 0.5);
  const start = performance.now();
  await Promise.all(order.map((id, i) => trackers[i % CLIENTS]!.completed(id, tree.get(id)!)));
  await finished;
  const seconds = (performance.now() - start) / 1000;
  const transactions = trackers.reduce((n, t) => n + t.stats.transactions, 0);
  const retries = trackers.reduce((n, t) => n + t.stats.retries, 0);
  const reads = trackers.reduce((n, t) => n + t.stats.reads, 0) + list.stats.reads;
  const writes = trackers.reduce((n, t) => n + t.stats.writes, 0) + list.stats.writes;
  await Promise.all([...clients, coordClient].map((c) => c.close()));
  return {
    backend, mode: maxBatch === 1 ? 'per task (seed)' : `batched (≤${maxBatch})`, tasks: TASKS, seconds,
    tasksPerSecond: TASKS / seconds, transactions, reads, writes,
    readWriteRatio: reads / writes, retriedPercent: (100 * retries) / transactions,
  };
}

const results: Result[] = [];
results.push(await run('embedded', () => connect('embedded:bench'), 1));
results.push(await run('embedded', () => connect('embedded:bench'), 64));
const zk = await startEnsemble({ size: 3 });
try {
  results.push(await run('zookeeper x3', () => connect(zk.connectionString), 1));
  results.push(await run('zookeeper x3', () => connect(zk.connectionString), 64));
} finally {
  await zk.stop();
}

console.log(`termination detection: ${TASKS} tasks in a random split tree, ${CLIENTS} clients (ZooKeeper: 3 servers on loopback)\n`);
printTable([
  ['backend', 'mode', 'seconds', 'tasks/s', 'txns', 'reads:writes', 'retried %', 'vs per task'],
  ...results.map((r, i) => [
    r.backend, r.mode, r.seconds, r.tasksPerSecond, r.transactions, `${r.readWriteRatio.toFixed(2)}:1`, r.retriedPercent,
    i % 2 === 1 ? `${(r.tasksPerSecond / results[i - 1]!.tasksPerSecond).toFixed(2)}x` : '1.00x',
  ]),
]);
writeFileSync(resultsFile('termination'), `${JSON.stringify({ machine: machineInfo(), tasks: TASKS, clients: CLIENTS, results }, null, 2)}\n`);
