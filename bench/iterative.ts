/**
 * Seed 001's experiment on this machine (RUPER-LB, Fig. 6–9): two node processes, each pinned to its
 * own core with taskset, one of them beside a REAL noisy neighbour (Debian's stress-ng pinned to the
 * same core, its CPU load changing every 3 s like the seed's time-of-day `yes` + `sleep`). The same
 * slab-transport job runs under `static`, `steal` and `ruper` in the same session, with and without
 * the neighbour. Reported per strategy: makespan, the ideal (iterations ÷ the measured throughput of
 * both processes), the finish time of every process and thread and their spread, and the speed of
 * each process over time (SVG). Without noise, ruper against static is the balancer's overhead.
 *
 *   scripts/ensure-stress-ng.sh && npx tsx bench/iterative.ts [--iterations N] [--workers W] [--reps R]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ITERATIVE_APPLICATIONS } from '../src/frameworks/iterative/apps/applications.js';
import type { NodeFigures } from '../src/frameworks/iterative/figures.js';
import type { BalanceStrategy } from '../src/frameworks/iterative/iterative-types.js';
import { submitIterative } from '../src/frameworks/iterative/run-iterative.js';
import { Cluster } from '../src/runtime/cluster.js';
import { requestJob } from '../src/runtime/job-control.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../test/support/node-process.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { writeIterativeCharts, type IterativeRun } from './iterative-charts.js';
import { printTable } from './table.js';

const { values: args } = parseArgs({ options: { iterations: { type: 'string' }, workers: { type: 'string' }, reps: { type: 'string' } } });
const ITERATIONS = Number(args.iterations ?? 6_000_000);
const WORKERS = Number(args.workers ?? 1);
const REPS = Number(args.reps ?? 1);
const RUPER = { checkpointInterval: 0.5, minRemaining: 0.2, maxDeviation: 0.1 };
/** The neighbour's CPU load on the shared core (%), a phase every 3 s, cycling. */
const HOG_PHASES = [50, 80, 30, 60];
const app = ITERATIVE_APPLICATIONS.slab!;

const ensured = spawnSync(`${projectRoot()}/scripts/ensure-stress-ng.sh`, { stdio: 'inherit' });
if (ensured.status !== 0) throw new Error('bench/iterative needs stress-ng (scripts/ensure-stress-ng.sh failed)');

/** Pins every thread of a process (and the threads it starts later) to one CPU. */
function pin(pid: number, cpu: number): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset failed for ${pid}: ${r.stderr}`);
}

/** stress-ng on `cpu`, its load changing phase by phase; stop() ends it. */
function noisyNeighbour(cpu: number): { stop(): void; phases: Array<{ at: number; load: number }> } {
  const phases: Array<{ at: number; load: number }> = [];
  const t0 = performance.now();
  let child: ChildProcess | undefined;
  let k = 0;
  let stopped = false;
  const next = () => {
    if (stopped) return;
    child?.kill('SIGKILL');
    const load = HOG_PHASES[k++ % HOG_PHASES.length]!;
    phases.push({ at: (performance.now() - t0) / 1000, load });
    child = spawn('taskset', ['-c', String(cpu), 'stress-ng', '--cpu', '1', '--cpu-load', String(load), '--quiet'], { stdio: 'ignore' });
  };
  next();
  const timer = setInterval(next, 3000);
  return { phases, stop: () => { stopped = true; clearInterval(timer); child?.kill('SIGKILL'); } };
}

async function runOnce(cluster: Cluster, nodes: NodeProcess[], balance: BalanceStrategy, noise: boolean): Promise<IterativeRun> {
  const hog = noise ? noisyNeighbour(1) : undefined;
  const label = new Map(nodes.map((n, i) => [n.id, i === 0 ? 'A (own core)' : noise ? 'B (beside stress-ng)' : 'B (own core)']));
  const t0 = performance.now();
  const job = await submitIterative(cluster, app.ref, { iterations: ITERATIONS, params: app.params, balance, nodes: 2, ruper: RUPER });
  let ended = false;
  let endedAt = 0;
  const outcome = job.outcome().finally(() => {
    endedAt = performance.now();
    ended = true;
  });
  const timeline: IterativeRun['timeline'] = [];
  const finish = new Map<string, number[]>();
  const done = new Map<string, number>();
  while (!ended) {
    const figures = (await requestJob(cluster.coordination, job.id, 'figures', null, { timeoutMs: 3000 }).catch(() => [])) as NodeFigures[];
    if (ended) break;
    const t = (performance.now() - t0) / 1000;
    for (const f of figures) {
      done.set(f.node, f.done);
      timeline.push({ t, node: label.get(f.node) ?? f.node, speed: f.speeds.reduce((a, b) => a + b, 0), done: f.done });
      // A thread's finish: when it last ran out of work (its idle time on the node's clock, moved to ours).
      finish.set(f.node, f.idleSince.map((s) => (s >= 0 ? t - (f.now - s) : -1)));
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const o = await outcome;
  const makespan = (endedAt - t0) / 1000;
  hog?.stop();
  if (o.status !== 'done') throw new Error(`${balance} job ended ${o.status}`);
  const processes = nodes.map((n) => {
    // Threads still busy at the last sample finished with the job.
    const threads = (finish.get(n.id) ?? [makespan]).map((x) => (x < 0 || x > makespan ? makespan : x));
    return { node: label.get(n.id)!, done: done.get(n.id) ?? 0, finish: Math.max(...threads), threads, rate: 0 };
  });
  // The last sample may precede the end: the process that finished last did what the others did not.
  const last = processes.reduce((a, b) => (b.finish > a.finish ? b : a));
  last.done = ITERATIONS - processes.filter((p) => p !== last).reduce((a, p) => a + p.done, 0);
  for (const p of processes) p.rate = p.done / p.finish;
  const ideal = ITERATIONS / processes.reduce((a, p) => a + p.rate, 0);
  const ends = processes.flatMap((p) => p.threads);
  return {
    balance, noise, makespan, ideal, overIdeal: makespan / ideal, spread: Math.max(...ends) - Math.min(...ends),
    iterations: (o.value as { n: number }).n, processes, timeline, hogPhases: hog?.phases ?? [],
  };
}

const zk = await startEnsemble({ size: 1 });
const secret = secretFile();
const nodes = await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: WORKERS })));
nodes.forEach((n, cpu) => pin(n.process.pid!, cpu));
const cluster = await Cluster.connect(zk.connectionString);
const runs: IterativeRun[] = [];
const single: Array<{ balance: string; seconds: number }> = [];
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const noise of [true, false]) {
      // The order rotates each repetition, so no strategy always runs first (or last) in a noise phase of the machine.
      const order = (['static', 'steal', 'ruper'] as const).map((_, k, all) => all[(k + rep) % all.length]!);
      for (const balance of order) {
        const r = await runOnce(cluster, nodes, balance, noise);
        if (r.iterations !== ITERATIONS) throw new Error(`${balance}: ${r.iterations} iterations counted, ${ITERATIONS} asked`);
        runs.push(r);
        console.error(`${noise ? 'noise' : 'quiet'} ${balance}: ${r.makespan.toFixed(2)} s (ideal ${r.ideal.toFixed(2)} s, spread ${r.spread.toFixed(2)} s)`);
      }
    }
  }
  // The balancer's own cost: one process, no neighbour, static and ruper alternately (best of each).
  for (let rep = 0; rep < 3; rep++) {
    for (const balance of ['static', 'ruper'] as const) {
      const t0 = performance.now();
      const job = await submitIterative(cluster, app.ref, { iterations: ITERATIONS / 2, params: app.params, balance, nodes: 1, ruper: RUPER });
      await job.result();
      single.push({ balance, seconds: (performance.now() - t0) / 1000 });
      console.error(`one process ${balance}: ${single[single.length - 1]!.seconds.toFixed(2)} s`);
    }
  }
} finally {
  await cluster.close();
  for (const n of nodes) n.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
  await zk.stop();
}

// The machine's other load changes from minute to minute: compare strategies within a repetition, then take medians.
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
const pick = (noise: boolean, balance: string) => runs.filter((r) => r.noise === noise && r.balance === balance);
const summary = ['static', 'steal', 'ruper'].map((balance) => {
  const n = pick(true, balance);
  const q = pick(false, balance);
  const nStatic = pick(true, 'static');
  const qStatic = pick(false, 'static');
  return {
    balance,
    noisyMakespan: median(n.map((r) => r.makespan)), noisyOverIdeal: median(n.map((r) => r.overIdeal)), noisySpread: median(n.map((r) => r.spread)),
    speedupOverStatic: median(n.map((r, k) => nStatic[k]!.makespan / r.makespan)),
    quietMakespan: median(q.map((r) => r.makespan)), quietOverStatic: median(q.map((r, k) => r.makespan / qStatic[k]!.makespan)),
  };
});
printTable([
  ['balance', 'noisy makespan s', '÷ ideal', 'finish spread s', '× static', 'quiet makespan s', 'quiet ÷ static'],
  ...summary.map((s) => [s.balance, s.noisyMakespan, s.noisyOverIdeal, s.noisySpread, s.speedupOverStatic, s.quietMakespan, s.quietOverStatic]),
]);
const singles = (balance: string) => single.filter((x) => x.balance === balance).map((x) => x.seconds);
const overhead = { static: median(singles('static')), ruper: median(singles('ruper')), ruperOverStatic: median(singles('ruper').map((x, k) => x / singles('static')[k]!)) - 1 };
console.log(`overhead without noise (one process, median of 3 alternating pairs): static ${overhead.static.toFixed(2)} s, ruper ${overhead.ruper.toFixed(2)} s (${(100 * overhead.ruperOverStatic).toFixed(1)} %)`);
const results = {
  machine: machineInfo(),
  note: 'Measured on a 2-core machine shared with other engineers running builds and tests at the same time: every figure carries their load on both cores besides the stress-ng neighbour; the integrator may re-run it.',
  app: app.name, iterations: ITERATIONS, workersPerNode: WORKERS, ruper: RUPER, hogPhases: HOG_PHASES, summary, overhead, single, runs,
};
writeFileSync(resultsFile('iterative'), `${JSON.stringify(results, null, 1)}\n`);
await writeIterativeCharts(results);
