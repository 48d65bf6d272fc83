/**
 * Seed 000's elasticity experiment (§5, Fig. 6 and Fig. 7) at this machine's scale: a TSP search
 * starts on k nodes (phase 1), `add` more nodes join at t1 (phase 2) and are drained at t1 + d
 * (phase 3; their tasks migrate). S% = (S_E − S_k) / S_k · 100 compares the elastic run's speedup
 * with the static run's on k nodes (Eq. 1; both are means of `--repeat` runs, as in the seed).
 * The added nodes are already running (the seed used running VMs, to leave start-up time out).
 * Pruning is off by default so every run does the same work (no search anomalies in S%).
 *
 *   npx tsx bench/elasticity.ts [--cities 12] [--seed 1] [--k 1] [--adds 1,2] [--phase2 2,4,6]
 *                               [--t1 2] [--repeat 3] [--backends embedded,zookeeper] [--prune]
 *
 * Embedded: every node in this process. ZooKeeper: a 3-server ensemble and node processes on
 * loopback (TCP between nodes). Writes bench/results/elasticity.json and two SVG charts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ClusterMonitor } from '../src/dashboard/cluster-monitor.js';
import type { TimelinePoint } from '../src/dashboard/snapshot.js';
import { APPLICATIONS, type Application } from '../src/frameworks/search/applications.js';
import { solveSequentially } from '../src/frameworks/search/define-search.js';
import { solveOnCluster } from '../src/frameworks/search/solve.js';
import { tspProblem } from '../src/frameworks/search/tsp/tsp.js';
import type { TspInstance } from '../src/frameworks/search/tsp/tsplib.js';
import { randomEuclideanInstance } from '../src/frameworks/search/tsp/tsp-tours.js';
import { Cluster } from '../src/runtime/client/cluster.js';
import type { ScaleStep } from '../src/runtime/client/scale-schedule.js';
import { secretFile, secretIn } from '../test/support/node-process.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { writeElasticityCharts, type ElasticityResults } from './elasticity-charts.js';
import { printTable } from './table.js';

const { values } = parseArgs({
  options: {
    cities: { type: 'string', default: '12' }, seed: { type: 'string', default: '1' }, k: { type: 'string', default: '1' },
    adds: { type: 'string', default: '1,2' }, phase2: { type: 'string', default: '2,4,6' }, t1: { type: 'string', default: '2' },
    repeat: { type: 'string', default: '3' }, backends: { type: 'string', default: 'embedded,zookeeper' }, prune: { type: 'boolean', default: false },
  },
});
const K = Number(values.k);
const ADDS = values.adds.split(',').map(Number);
const PHASE2 = values.phase2.split(',').map(Number);
const T1 = Number(values.t1);
const REPEAT = Number(values.repeat);
const BACKENDS = values.backends.split(',') as Array<'embedded' | 'zookeeper'>;
const NO_PRUNE = !values.prune;
const instance: TspInstance = randomEuclideanInstance(Number(values.cities), Number(values.seed));
const app = APPLICATIONS.tsp as unknown as Application<TspInstance>;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface Run { seconds: number; objective: number; steals: number; migrations: number; timeline: TimelinePoint[] }

/** One run on a fresh cluster with k + add nodes running, k of them in the job at the start. */
async function run(backend: 'embedded' | 'zookeeper', zk: string | undefined, add: number, schedule: ScaleStep[]): Promise<Run> {
  const total = K + add;
  const common = { workers: 1, noPrune: NO_PRUNE, schedule, jobNodes: K, startNodesOnScaleOut: false };
  let cluster: Cluster | undefined;
  if (backend === 'embedded') cluster = await Cluster.embedded({ nodes: total, workers: 1, progressIntervalMs: 250 });
  const watcher = cluster ?? await Cluster.connect(zk!, { secret: secretIn(SECRET!) });
  const monitor = new ClusterMonitor(watcher.coordination, { intervalMs: 250, historyPoints: 100_000 });
  await monitor.start();
  try {
    const out = await solveOnCluster(app, instance, backend === 'embedded'
      ? { ...common, nodes: total, cluster: cluster! }
      : { ...common, nodes: total, zk: zk!, secretFile: SECRET!, nodeEntry: { execArgv: [], script: `${projectRoot()}/bin/tidepool.mjs` } });
    await monitor.tick();
    return { seconds: out.stats.seconds, objective: out.result.value ?? Number.NaN, steals: out.stats.steals, migrations: out.stats.migrations, timeline: monitor.hello().history };
  } finally {
    await monitor.stop();
    await watcher.close();
  }
}

console.log(`TSP ${instance.name}${NO_PRUNE ? ' without pruning (fixed work)' : ''}: k = ${K} node(s) × 1 worker; nodes added at t1 = ${T1} s for ${PHASE2.join('/')} s; ${REPEAT} runs each`);
const seqStart = performance.now();
const reference = solveSequentially(tspProblem, instance, { noPrune: NO_PRUNE });
const sequential = (performance.now() - seqStart) / 1000;
console.log(`plain sequential solver: ${sequential.toFixed(2)} s, optimum ${reference.value}\n`);

let SECRET: string | undefined;
const results: Array<Record<string, unknown>> = [];
let timelineRun: { backend: string; add: number; phase2: number; timeline: TimelinePoint[] } | undefined;
for (const backend of BACKENDS) {
  let zk: string | undefined;
  let stopEnsemble: (() => Promise<void>) | undefined;
  if (backend === 'zookeeper') {
    if (spawnSync('bash', [`${projectRoot()}/scripts/ensure-zookeeper.sh`], { stdio: 'inherit' }).status !== 0) throw new Error('ZooKeeper could not be installed');
    const ensemble = await startEnsemble({ size: 3 });
    zk = ensemble.connectionString;
    stopEnsemble = () => ensemble.stop();
    SECRET = secretFile();
  }
  try {
    const check = (r: Run) => {
      if (r.objective !== reference.value) throw new Error(`${backend}: tour ${r.objective}, optimum ${reference.value}`);
      return r;
    };
    const statics: Run[] = [];
    for (let i = 0; i < REPEAT; i++) statics.push(check(await run(backend, zk, 0, [])));
    const tStatic = mean(statics.map((r) => r.seconds));
    const sK = sequential / tStatic;
    results.push({ backend, add: 0, phase2: 0, seconds: statics.map((r) => r.seconds), speedup: sK, speedupChangePercent: 0 });
    for (const add of ADDS) {
      for (const d of PHASE2) {
        const schedule: ScaleStep[] = [{ atMs: T1 * 1000, delta: add }, { atMs: (T1 + d) * 1000, delta: -add }];
        const runs: Run[] = [];
        for (let i = 0; i < REPEAT; i++) runs.push(check(await run(backend, zk, add, schedule)));
        const sE = sequential / mean(runs.map((r) => r.seconds));
        results.push({
          backend, add, phase2: d, seconds: runs.map((r) => r.seconds), speedup: sE,
          speedupChangePercent: ((sE - sK) / sK) * 100, migrations: runs.map((r) => r.migrations), steals: runs.map((r) => r.steals),
        });
        if (backend === BACKENDS[0] && add === Math.max(...ADDS) && d === Math.max(...PHASE2)) timelineRun = { backend, add, phase2: d, timeline: runs[0]!.timeline };
      }
    }
  } finally {
    await stopEnsemble?.();
  }
}

printTable([
  ['backend', 'nodes in phase 2', 'phase 2 (s)', 'mean time (s)', 'speedup', 'S%'],
  ...results.map((r) => [
    String(r.backend), String(K + (r.add as number)), r.phase2 === 0 ? 'static' : String(r.phase2),
    mean(r.seconds as number[]), r.speedup as number, (r.speedupChangePercent as number).toFixed(1),
  ]),
]);

const out = resultsFile('elasticity');
writeFileSync(out, `${JSON.stringify({
  machine: machineInfo(), instance: instance.name, noPrune: NO_PRUNE, k: K, t1: T1, repeat: REPEAT, sequentialSeconds: sequential,
  results, timeline: timelineRun,
}, null, 2)}\n`);

await writeElasticityCharts(JSON.parse(readFileSync(out, 'utf8')) as ElasticityResults);
console.log(`\nwrote ${out.pathname} and the SVG charts next to it`);
