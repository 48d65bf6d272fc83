/**
 * Small tasks, tidepool beside Piscina, in one run on this machine (2 worker threads each):
 * - flat map of N no-op tasks: Piscina (`pool.run` per item) vs tidepool (a root task spawning N
 *   tasks; every one goes through the task pool and termination accounting) — tasks/s, µs per task;
 * - the same flat map in tidepool's idiom: one splittable range task (potential splitting);
 * - a binary tree of tasks spawned from inside tasks (depth D), which Piscina cannot express.
 * For tidepool, the ledger transactions its last run committed (per 1,000 tasks) show how much of the
 * work was recorded task by task, in batches, or run inline as part of a recorded parent.
 * Pools and clusters are created once and warmed up; the workloads then run in turn, round after
 * round (the order reversed every other round); the fastest of `--repeat` runs each (this machine's
 * neighbours only ever add time; every sample is kept in the JSON).
 *
 *   npx tsx bench/peers/small-tasks.ts [--n 20000] [--depth 12] [--repeat 5]
 *
 * Writes bench/results/peers-small-tasks.json.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { ledgerPaths } from '../../src/runtime/pool/task-pool-spec.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { machineInfo, projectRoot, resultsFile } from '../machine.js';
import { printTable } from '../table.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '20000' }, depth: { type: 'string', default: '12' }, repeat: { type: 'string', default: '5' } } });
const N = Number(values.n);
const DEPTH = Number(values.depth);
const REPEAT = Number(values.repeat);
const WORKERS = 2;
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const ref = (path: string): TaskRef => ({ module: new URL(`${path}${EXT}`, import.meta.url).href, export: 'default' });
const FAN = ref('../../test/runtime/apps/sleepy-fan');
const RANGE = ref('../apps/noop-range');
const TREE = ref('../../test/runtime/apps/spawn-tree');

const best = (xs: number[]) => Math.min(...xs);

/** One workload, set up once: `once` runs it, `close` tears it down. */
interface Workload { once(): Promise<void>; close(): Promise<void> }

/**
 * Every workload warmed up, then REPEAT rounds in which each runs once — in turn, the order reversed
 * every other round — so that a slow spell of this shared machine falls on all of them alike.
 */
async function interleaved(workloads: Workload[]): Promise<number[][]> {
  for (const w of workloads) await w.once(); // warm-up
  const samples = workloads.map((): number[] => []);
  for (let r = 0; r < REPEAT; r++) {
    const order = workloads.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const t = performance.now();
      await workloads[i]!.once();
      samples[i]!.push((performance.now() - t) / 1000);
    }
  }
  return samples;
}

function piscinaFlat(): Workload {
  const filename = fileURLToPath(new URL('bench/peers/piscina-noop.mjs', `file://${projectRoot()}/`));
  const pool = new Piscina({ filename, minThreads: WORKERS, maxThreads: WORKERS });
  return {
    once: async () => {
      const results = await Promise.all(Array.from({ length: N }, (_, i) => pool.run(i) as Promise<number>));
      if (results.reduce((a, b) => a + b, 0) !== N) throw new Error('piscina: wrong sum');
    },
    close: () => pool.destroy(),
  };
}

/** A tidepool job on its own embedded cluster; `transactions` counts the ledger transactions of its latest run. */
async function tidepoolJob(expect: number, submit: (c: Cluster) => ReturnType<Cluster['submit']>): Promise<Workload & { transactions(): Promise<number> }> {
  const cluster = await Cluster.embedded({ nodes: 1, workers: WORKERS, progressIntervalMs: 0 });
  let last = '';
  return {
    once: async () => {
      const job = await submit(cluster);
      const got = await job.result<number>();
      if (got !== expect) throw new Error(`tidepool: result ${got}, expected ${expect}`);
      last = job.id;
    },
    transactions: async () => (await cluster.coordination.getChildren(ledgerPaths(jobPaths(last)).txns)).length,
    close: () => cluster.close(),
  };
}

const treeTasks = 2 ** (DEPTH + 1) - 1;
const piscinaRun = piscinaFlat();
const spawnedRun = await tidepoolJob(N + 1, (c) => c.submit(FAN, { fanout: N, spin: 0, root: true }));
const rangeRun = await tidepoolJob(N, (c) => c.submit(RANGE, { lo: 0, hi: N }));
const treeRun = await tidepoolJob(treeTasks, (c) => c.submit(TREE, { level: 0, depth: DEPTH }));
const [piscina, spawnedSamples, rangeSamples, treeSamples] = await interleaved([piscinaRun, spawnedRun, rangeRun, treeRun]);
const spawned = { samples: spawnedSamples!, transactions: await spawnedRun.transactions() };
const range = { samples: rangeSamples!, transactions: await rangeRun.transactions() };
const tree = { samples: treeSamples!, transactions: await treeRun.transactions() };
for (const w of [piscinaRun, spawnedRun, rangeRun, treeRun]) await w.close();

const row = (name: string, items: number, samples: number[], transactions?: number) => {
  const s = best(samples);
  return { name, items, seconds: s, perSecond: items / s, microsPerItem: (s * 1e6) / items, samples, ...(transactions !== undefined ? { ledgerTransactionsPer1000: (1000 * transactions) / items } : {}) };
};
const rows = [
  row(`Piscina: ${N} no-op tasks (pool.run each)`, N, piscina!),
  row(`tidepool: root spawns ${N} no-op tasks`, N + 1, spawned.samples, spawned.transactions),
  row(`tidepool: one range task over ${N} items (potential splitting)`, N, range.samples, range.transactions),
  row(`tidepool: binary tree of ${treeTasks} tasks spawned from tasks (depth ${DEPTH})`, treeTasks, tree.samples, tree.transactions),
];
console.log(`small tasks on ${WORKERS} worker threads (embedded tidepool, 1 node), fastest of ${REPEAT} interleaved runs after a warm-up; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
printTable([['workload', 'items', 'seconds', 'items/s', 'µs/item', 'ledger txns/1k'], ...rows.map((r) => [r.name, r.items, r.seconds, Math.round(r.perSecond), r.microsPerItem, r.ledgerTransactionsPer1000 ?? '-'])]);
const ratio = rows[1]!.perSecond / rows[0]!.perSecond;
const treeRatio = rows[3]!.perSecond / rows[0]!.perSecond;
console.log(`\ntidepool spawned tasks vs Piscina: ${ratio.toFixed(2)}× the throughput (target ≥ 2×)`);
console.log(`tidepool spawned tree vs Piscina's flat fan: ${treeRatio.toFixed(2)}× (${Math.round(rows[3]!.perSecond)} tasks/s; target ≥ 60,000)`);
writeFileSync(resultsFile('peers-small-tasks'), `${JSON.stringify({
  machine: machineInfo(), n: N, depth: DEPTH, repeat: REPEAT, workers: WORKERS, rows,
  tidepoolVsPiscina: ratio, treeVsPiscina: treeRatio,
}, null, 2)}\n`);
