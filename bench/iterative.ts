/**
 * Seed 001's experiment on this machine (RUPER-LB, Fig. 6–9) with a REAL noisy neighbour: Debian's
 * stress-ng pinned with taskset to one core, its demand changing every 3 s like the seed's
 * time-of-day `yes` + `sleep`, and on average leaving the process beside it about half that core.
 *
 * - Two processes (Fig. 6–7 left): two `tidepool node` processes × 1 worker thread, each pinned to its
 *   own core, B beside the neighbour; and the same without the neighbour.
 * - Two processes, B at half a core: the same pair, no neighbour, B's node process (every thread)
 *   in a cgroup whose CFS quota is 50 ms per 100 ms (bench/cpu-quota.ts): exactly half a core however
 *   idle the machine is, where the neighbour's share varies. Needs root and a writable cgroup v1 cpu
 *   hierarchy; without them these rows are reported as not measurable.
 * - One process × 2 threads (Fig. 7 right, Fig. 8): one node process whose two worker threads are
 *   pinned one per core, the neighbour beside thread 1; per-thread finish times.
 * - Overhead: the 2-thread process with no neighbour, static and ruper alternately.
 *
 * - One process × 2 threads, no neighbour (Fig. 8, balancing on a single tenant): the quiet runs of the
 *   experiment above, reported on their own with the threads' speeds in the static runs (Fig. 9).
 * - Iterations swept (Fig. 7 left): the two-process pair with B at half a core (or, without a CPU quota,
 *   beside the neighbour), `static` and `ruper` at several multiples of the iterations: the gap between
 *   the processes' finish times against the makespan, which shrinks as the job grows at a fixed Δt_pc.
 *
 * The same slab-transport job runs under `static`, `steal` and `ruper` in the same session, the
 * strategies' order rotating per repetition. Per run: makespan, every thread's finish time and their
 * spread (with the sampling resolution the figures were taken at), speeds over time; the ideal
 * makespan comes from the threads' speeds in the same repetition's `static` run (iterations ÷ their
 * sum), so ÷ ideal says how far a strategy was from what those speeds allowed.
 *
 *   scripts/ensure-stress-ng.sh && npx tsx bench/iterative.ts [--iterations N] [--reps R] [--sweep 0.25,0.5,1,2]
 *   npm run bench:build && node dist/bench/iterative.js --quick   (a short run: see --help)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ITERATIVE_APPLICATIONS } from '../src/frameworks/iterative/apps/applications.js';
import type { NodeFigures } from '../src/frameworks/iterative/figures.js';
import type { BalanceStrategy } from '../src/frameworks/iterative/iterative-types.js';
import { submitIterative } from '../src/frameworks/iterative/run-iterative.js';
import { Cluster } from '../src/runtime/client/cluster.js';
import { requestJob } from '../src/runtime/client/job-requests.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../test/support/node-process.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { processCpuSeconds, statTicks } from './proc-cpu.js';
import { createCpuQuota, CpuQuotaUnavailable, removeOnExit, type CpuQuota } from './cpu-quota.js';
import { writeIterativeCharts, type Condition, type IterativeRun, type ThreadResult } from './iterative-charts.js';
import { printTable } from './table.js';

const USAGE = `usage: bench/iterative [--iterations N] [--reps R] [--sweep M,M,…] [--quick] [--help]

RUPER-LB (Giménez-Alventosa, Moltó and Segrelles, "RUPER-LB: Load balancing embarrasingly parallel
applications in unpredictable cloud environments", 2020) Fig. 6-9 on this machine: the slab job under
static, steal and ruper on two node processes (B beside stress-ng, without it, at half a core by a
CPU quota), on one process x 2 threads, and swept over job sizes (Fig. 7 left). Writes
bench/results/iterative.json and its charts (--quick: iterative-quick.json, iterative-quick-*.svg).

  --iterations N   slab histories per job (default 32000000; --quick 2000000)
  --reps R         repetitions, strategies rotated per repetition (default 3; --quick 1)
  --sweep M,M,…    multiples of N for the Fig. 7 left sweep (default 0.25,0.5,1,2; --quick 0.5,1;
                   '' skips it)
  --quick          a short run that checks the bench works; its figures are not results
  --help           this text

Needs stress-ng (scripts/ensure-stress-ng.sh installs it) and taskset; the half-core rows need root
and a writable cgroup v1 cpu hierarchy (else they are reported as not measurable).
`;
const { values: args } = parseArgs({
  options: { iterations: { type: 'string' }, reps: { type: 'string' }, sweep: { type: 'string' }, quick: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
});
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
/** A whole number ≥ `min` from flag `name`, or the default. */
function wholeFlag(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name}: a whole number ≥ ${min}; got "${value}"`);
  return n;
}
const QUICK = args.quick;
const ITERATIONS = wholeFlag('iterations', args.iterations, QUICK ? 2_000_000 : 32_000_000, 1000);
const REPS = wholeFlag('reps', args.reps, QUICK ? 1 : 3, 1);
/** Fig. 7 left: multiples of ITERATIONS the two-process pair runs at (`--sweep ''` skips it). */
const SWEEP = (args.sweep ?? (QUICK ? '0.5,1' : '0.25,0.5,1,2')).split(',').filter((x) => x.trim() !== '').map(Number);
if (SWEEP.some((x) => !(x > 0) || Math.round(ITERATIONS * x) < 1)) throw new Error(`--sweep: multiples of the iterations, > 0, comma-separated; got "${args.sweep}"`);
/** Where the results go: a quick run's beside the real ones, never over them. */
const RESULTS_NAME = QUICK ? 'iterative-quick' : 'iterative';
/** How often the figures are asked for while a job runs (ms): the finish times' sampling interval, at best. */
const SAMPLE_MS = 100;
const RUPER = { checkpointInterval: 0.5, minRemaining: 0.2, maxDeviation: 0.1 };
/**
 * The neighbour, a phase every 3 s, cycling: stress-ng CPU stressors on the shared core and their
 * load (%). Beside one busy stressor a thread gets about 1/2 of the core, beside two about 1/3, beside
 * one at 50 % about 3/4: on average about half the core, changing while the job runs.
 */
const HOG_PHASES = [{ stressors: 1, load: 100 }, { stressors: 2, load: 100 }, { stressors: 1, load: 50 }, { stressors: 1, load: 100 }];
const PHASE_MS = 3000;
/** B's CPU quota in the half-core scenario, in cores. */
const HALF_CORE = 0.5;
const STRATEGIES = ['static', 'steal', 'ruper'] as const;
const app = ITERATIVE_APPLICATIONS.slab!;

const ensured = spawnSync(`${projectRoot()}/scripts/ensure-stress-ng.sh`, { stdio: 'inherit' });
if (ensured.status !== 0) throw new Error('bench/iterative needs stress-ng (scripts/ensure-stress-ng.sh failed)');

/** Pins a process (every thread with `all`, else the one thread `id`) to CPUs `cpus`. */
function pin(id: number, cpus: string, all = true): void {
  const r = spawnSync('taskset', [...(all ? ['-a'] : []), '-p', '-c', cpus, String(id)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset failed for ${id}: ${r.stderr}`);
}

/** CPU time (clock ticks) each thread of a process has used so far. */
function threadTimes(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), statTicks(`/proc/${pid}/task/${tid}/stat`));
  return out;
}

/** Each labelled node's process id (A, B, C), for the CPU each uses during a run. */
const pids = new Map<string, number>();

/** stress-ng on `cpu`, its demand changing phase by phase; stop() ends it. */
function noisyNeighbour(cpu: number): { stop(): void; phases: Array<{ at: number; stressors: number; load: number }> } {
  const phases: Array<{ at: number; stressors: number; load: number }> = [];
  const t0 = performance.now();
  let child: ChildProcess | undefined;
  let k = 0;
  let stopped = false;
  const next = () => {
    if (stopped) return;
    // SIGTERM: stress-ng then ends its stressors too (SIGKILL would leave them running for a while).
    child?.kill('SIGTERM');
    const phase = HOG_PHASES[k++ % HOG_PHASES.length]!;
    phases.push({ at: (performance.now() - t0) / 1000, ...phase });
    child = spawn('taskset', ['-c', String(cpu), 'stress-ng', '--cpu', String(phase.stressors), '--cpu-load', String(phase.load), '--quiet'], { stdio: 'ignore' });
  };
  next();
  const timer = setInterval(next, PHASE_MS);
  return { phases, stop: () => { stopped = true; clearInterval(timer); child?.kill('SIGTERM'); } };
}

/**
 * Runs the job on the nodes labelled in `labels` (a job takes every idle node it asks for: only they
 * are idle), following every node's figures every SAMPLE_MS for finish times and speeds.
 */
async function runOnce(cluster: Cluster, labels: Map<string, string>, balance: BalanceStrategy, condition: Condition, iterations: number, rep: number): Promise<IterativeRun> {
  const noise = condition === 'neighbour';
  const hog = noise ? noisyNeighbour(1) : undefined;
  const cpuBefore = new Map([...labels.values()].filter((l) => pids.has(l)).map((l) => [l, processCpuSeconds(pids.get(l)!)]));
  const t0 = performance.now();
  const job = await submitIterative(cluster, app.ref, { iterations, params: app.params, balance, nodes: labels.size, ruper: RUPER });
  let ended = false;
  let endedAt = 0;
  const outcome = job.outcome().finally(() => {
    endedAt = performance.now();
    ended = true;
  });
  const timeline: IterativeRun['timeline'] = [];
  const last = new Map<string, { done: number[]; speeds: number[]; finish: number[] }>();
  /** When each answered sample was taken (s): the finish times are known to their gaps. */
  const sampled: number[] = [];
  while (!ended) {
    const figures = (await requestJob(cluster.coordination, job.id, 'figures', null, { timeoutMs: 3000 }).catch(() => [])) as NodeFigures[];
    if (ended) break;
    const t = (performance.now() - t0) / 1000;
    if (figures.length > 0) sampled.push(t);
    for (const f of figures) {
      const node = labels.get(f.node) ?? f.node;
      timeline.push({ t, series: node, speed: f.speeds.reduce((a, b) => a + b, 0), done: f.done });
      if (f.speeds.length > 1) f.speeds.forEach((s, slot) => timeline.push({ t, series: `${node} thread ${slot}`, speed: s, done: f.doneBySlot[slot] ?? 0 }));
      // A thread's finish: when it last ran out of work (its idle time on the node's clock, moved to ours).
      last.set(node, { done: f.doneBySlot, speeds: f.speeds, finish: f.idleSince.map((s) => (s >= 0 ? t - (f.now - s) : -1)) });
    }
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  const o = await outcome;
  const makespan = (endedAt - t0) / 1000;
  const resolution = Math.max(...[0, ...sampled, makespan].map((t, k, all) => (k === 0 ? 0 : t - all[k - 1]!)));
  // Cores each process used during the run (B at half a core: at most its quota).
  const cpuCores = Object.fromEntries([...cpuBefore].map(([l, before]) => [l, (processCpuSeconds(pids.get(l)!) - before) / makespan]));
  hog?.stop();
  if (o.status !== 'done') throw new Error(`${balance} job ended ${o.status}`);
  const threads: ThreadResult[] = [...labels.values()].flatMap((process) => {
    const l = last.get(process);
    if (!l) return [{ process, thread: 0, done: 0, finish: makespan, rate: 0, busyAtEnd: true, speed: 0 }];
    return l.done.map((done, thread) => {
      const x = l.finish[thread] ?? -1;
      const busyAtEnd = x < 0 || x > makespan;
      return { process, thread, done, finish: busyAtEnd ? makespan : x, rate: 0, busyAtEnd, speed: l.speeds[thread] ?? 0 };
    });
  });
  // The last sample precedes the end by up to `resolution`: the threads still busy then did the rest, by their speed.
  const missing = iterations - threads.reduce((a, x) => a + x.done, 0);
  const busy = threads.filter((x) => x.busyAtEnd);
  const busySpeed = busy.reduce((a, x) => a + x.speed, 0);
  for (const x of busy) x.done += busySpeed > 0 ? (missing * x.speed) / busySpeed : missing / busy.length;
  for (const x of threads) x.rate = x.done / x.finish;
  const processes = [...labels.values()].map((node) => {
    const mine = threads.filter((x) => x.process === node);
    return { node, done: mine.reduce((a, x) => a + x.done, 0), finish: Math.max(...mine.map((x) => x.finish)) };
  });
  const ends = threads.map((x) => x.finish);
  return {
    balance, condition, rep, noise, makespan, ideal: NaN, overIdeal: NaN, spread: Math.max(...ends) - Math.min(...ends), resolution,
    iterations: (o.value as { n: number }).n, processes, threads, timeline, hogPhases: hog?.phases ?? [], cpuCores,
  };
}

/**
 * Each run's ideal from its repetition's static run under the same condition and size: iterations ÷ the
 * summed speeds of static's threads (each works its share to its end there, so done ÷ finish is its speed).
 */
function idealFromStatic(runs: IterativeRun[]): void {
  for (const r of runs) {
    const st = runs.find((x) => x.balance === 'static' && x.rep === r.rep && x.condition === r.condition && x.iterations === r.iterations);
    if (!st) continue;
    r.ideal = r.iterations / st.threads.reduce((a, x) => a + x.rate, 0);
    r.overIdeal = r.makespan / r.ideal;
  }
}

/** A condition the strategies run under, with what sets it up before its runs and undoes it after. */
interface Setting { condition: Condition; enter?(): void; leave?(): void }

/** Every strategy under every condition, `REPS` times, the order rotating per repetition. */
async function experiment(name: string, cluster: Cluster, labels: Map<string, string>, settings: Setting[]): Promise<IterativeRun[]> {
  const runs: IterativeRun[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    for (const { condition, enter, leave } of settings) {
      const order = STRATEGIES.map((_, k, all) => all[(k + rep) % all.length]!);
      enter?.();
      try {
        for (const balance of order) {
          const r = await runOnce(cluster, labels, balance, condition, ITERATIONS, rep);
          if (r.iterations !== ITERATIONS) throw new Error(`${balance}: ${r.iterations} iterations counted, ${ITERATIONS} asked`);
          runs.push(r);
          console.error(`${name}, ${condition}, ${balance}: ${r.makespan.toFixed(2)} s (spread ${r.spread.toFixed(2)} s at ${r.resolution.toFixed(2)} s resolution)`);
        }
      } finally {
        leave?.();
      }
    }
  }
  idealFromStatic(runs);
  return runs;
}

/**
 * Fig. 7 left: static and ruper at each multiple of ITERATIONS in `SWEEP` under one condition, the
 * sizes' order rotating per repetition; per run the gap between the processes' finish times.
 */
async function sweep(cluster: Cluster, labels: Map<string, string>, setting: Setting): Promise<IterativeRun[]> {
  const runs: IterativeRun[] = [];
  const sizes = SWEEP.map((m) => Math.round(ITERATIONS * m));
  setting.enter?.();
  try {
    for (let rep = 0; rep < REPS; rep++) {
      for (const iterations of sizes.map((_, k, all) => all[(k + rep) % all.length]!)) {
        for (const balance of rep % 2 === 0 ? ['static', 'ruper'] as const : ['ruper', 'static'] as const) {
          const r = await runOnce(cluster, labels, balance, setting.condition, iterations, rep);
          if (r.iterations !== iterations) throw new Error(`${balance}: ${r.iterations} iterations counted, ${iterations} asked`);
          runs.push(r);
          console.error(`sweep, ${setting.condition}, ${iterations} histories, ${balance}: ${r.makespan.toFixed(2)} s (processes ${processGap(r).toFixed(2)} s apart)`);
        }
      }
    }
  } finally {
    setting.leave?.();
  }
  idealFromStatic(runs);
  return runs;
}

/** The gap between the processes' finish times (s), as Fig. 6–7 left show them by rank. */
const processGap = (r: IterativeRun) => Math.max(...r.processes.map((p) => p.finish)) - Math.min(...r.processes.map((p) => p.finish));

// The machine's other load changes from minute to minute: compare strategies within a repetition, then take medians.
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;

/** The static run of `r`'s repetition, condition and size (what × static and the ideal compare against). */
const staticOf = (r: IterativeRun, runs: IterativeRun[]) => runs.find((x) => x.balance === 'static' && x.rep === r.rep && x.condition === r.condition && x.iterations === r.iterations)!;

/** Medians over `runs` (one strategy, one condition): makespan, ÷ ideal, × static (its static run ÷ it), spread and its resolution. */
function medians(runs: IterativeRun[], all: IterativeRun[]) {
  return {
    makespan: median(runs.map((r) => r.makespan)), overIdeal: median(runs.map((r) => r.overIdeal)),
    speedupOverStatic: median(runs.map((r) => staticOf(r, all).makespan / r.makespan)),
    spread: median(runs.map((r) => r.spread)), resolution: Math.max(...runs.map((r) => r.resolution)),
  };
}

/** Per strategy beside the neighbour and without; and the slowed thread's share of its core. */
function summarize(runs: IterativeRun[], slowed: string) {
  const pick = (noise: boolean, balance: string) => runs.filter((r) => r.noise === noise && r.balance === balance);
  // The slowed thread's speed beside the neighbour ÷ its speed without (static runs: it works to the end).
  const rateOf = (r: IterativeRun) => r.threads.find((x) => `${x.process} thread ${x.thread}` === slowed || (x.process === slowed && x.thread === 0))!.rate;
  const neighbourShare = median(pick(true, 'static').map(rateOf)) / median(pick(false, 'static').map(rateOf));
  const strategies = STRATEGIES.map((balance) => ({ balance, noisy: medians(pick(true, balance), runs), quiet: medians(pick(false, balance), runs) }));
  return { neighbourShare, strategies };
}

/**
 * Fig. 8 (balancing on a single tenant): the 2-thread process's runs without a neighbour, per strategy;
 * and how unequal its threads were in the static runs (the slower one's speed ÷ the faster one's), what
 * Fig. 9 shows behind the seed's 6–7 %.
 */
function summarizeSingleTenant(runs: IterativeRun[]) {
  const quiet = runs.filter((r) => r.condition === 'quiet');
  const ratio = (r: IterativeRun) => Math.min(...r.threads.map((x) => x.rate)) / Math.max(...r.threads.map((x) => x.rate));
  return {
    threadSpeedRatio: median(quiet.filter((r) => r.balance === 'static').map(ratio)),
    strategies: STRATEGIES.map((balance) => ({ balance, ...medians(quiet.filter((r) => r.balance === balance), runs) })),
  };
}

/** Fig. 7 left: per size and strategy, medians of makespan, the processes' finish gap, the gap ÷ makespan, ÷ ideal. */
function summarizeSweep(runs: IterativeRun[]) {
  const sizes = [...new Set(runs.map((r) => r.iterations))].sort((a, b) => a - b);
  return sizes.flatMap((iterations) => (['static', 'ruper'] as const).map((balance) => {
    const mine = runs.filter((r) => r.iterations === iterations && r.balance === balance);
    return {
      iterations, balance, makespan: median(mine.map((r) => r.makespan)), processGap: median(mine.map(processGap)),
      gapOverMakespan: median(mine.map((r) => processGap(r) / r.makespan)), overIdeal: median(mine.map((r) => r.overIdeal)),
      resolution: Math.max(...mine.map((r) => r.resolution)),
    };
  }));
}

/**
 * The half-core rows: per strategy, medians of makespan, ÷ ideal, spread and × static (within a
 * repetition); B's share of its core (its speed at the quota ÷ without, static runs); and the best any
 * strategy could do against static, from the processes' speeds measured in the static runs (each works
 * to the end of its half there): static takes (N/2) / min(a, b), the ideal N / (a + b) — static's own ÷ ideal.
 */
function summarizeHalfCore(half: IterativeRun[], quiet: IterativeRun[], quota: CpuQuota) {
  const rate = (r: IterativeRun, process: string) => r.threads.find((x) => x.process === process)!.rate;
  const halfStatic = half.filter((r) => r.balance === 'static');
  const quietStatic = quiet.filter((r) => r.balance === 'static');
  return {
    quotaUs: quota.quotaUs, periodUs: quota.periodUs,
    shareOfB: median(halfStatic.map((r) => rate(r, 'B'))) / median(quietStatic.map((r) => rate(r, 'B'))),
    // Robust to other work on the machine: both measured in the same runs.
    speedOfBOverA: median(halfStatic.map((r) => rate(r, 'B') / rate(r, 'A'))),
    // CPU B's process used per second of the static runs (B works to their end there).
    cpuOfB: median(halfStatic.map((r) => r.cpuCores.B ?? NaN)),
    speeds: { A: median(halfStatic.map((r) => rate(r, 'A'))), B: median(halfStatic.map((r) => rate(r, 'B'))) },
    bestOverStatic: median(halfStatic.map((r) => r.overIdeal)),
    // Per repetition: whether A had its core and B its half (cores used in the static run), and how ruper did.
    repetitions: halfStatic.map((st) => {
      const ruper = half.find((r) => r.balance === 'ruper' && r.rep === st.rep)!;
      return { coresA: st.cpuCores.A, coresB: st.cpuCores.B, bestOverStatic: st.overIdeal, ruperOverStatic: st.makespan / ruper.makespan, ruperOverIdeal: ruper.overIdeal, ruperSpread: ruper.spread, resolution: ruper.resolution };
    }),
    strategies: STRATEGIES.map((balance) => ({ balance, ...medians(half.filter((r) => r.balance === balance), half) })),
  };
}

const HEAD = ['balance', 'makespan s', '÷ ideal', '× static', 'finish spread s', 'resolution s'];
const row = (balance: string, m: ReturnType<typeof medians>) => [balance, m.makespan, m.overIdeal, m.speedupOverStatic, m.spread, m.resolution];

function print(title: string, s: ReturnType<typeof summarize>): void {
  console.log(`\n${title} (the slowed ${s.neighbourShare.toFixed(2)} of its core beside the neighbour)`);
  printTable([['', ...HEAD], ...s.strategies.flatMap((x) => [['beside stress-ng', ...row(x.balance, x.noisy)], ['no neighbour', ...row(x.balance, x.quiet)]])]);
}

// B's half core: a cgroup made before anything else starts, removed at the end (also on error or a signal).
let quota: CpuQuota | undefined;
let quotaUnavailable: string | undefined;
try {
  quota = createCpuQuota({ cores: HALF_CORE });
  removeOnExit(quota);
} catch (e) {
  if (!(e instanceof CpuQuotaUnavailable)) throw e;
  quotaUnavailable = e.message;
  console.error(`the half-core scenario is not measurable here: ${e.message}`);
}
const zk = await startEnsemble({ size: 1 });
const secret = secretFile();
const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
let twoProcesses: IterativeRun[] = [];
let halfCoreRuns: IterativeRun[] = [];
let oneProcess: IterativeRun[] = [];
let sweepRuns: IterativeRun[] = [];
let sweepCondition: Condition | undefined;
const single: Array<{ balance: string; seconds: number }> = [];
const threadCpus: Array<{ slot: number; tid: number; cpu: number }> = [];
try {
  // Two processes × 1 thread, each on its own core; B beside the neighbour, and B at half a core.
  const pair = await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 })));
  try {
    pair.forEach((n, cpu) => pin(n.process.pid!, String(cpu)));
    pair.forEach((n, k) => pids.set(k === 0 ? 'A' : 'B', n.process.pid!));
    const b = pair[1]!.process.pid!;
    const settings: Setting[] = [{ condition: 'neighbour' }, { condition: 'quiet' }];
    if (quota) settings.push({ condition: 'half-core', enter: () => quota!.add(b), leave: () => quota!.release(b) });
    const labels = new Map([[pair[0]!.id, 'A'], [pair[1]!.id, 'B']]);
    const runs = await experiment('two processes', cluster, labels, settings);
    twoProcesses = runs.filter((r) => r.condition !== 'half-core');
    halfCoreRuns = runs.filter((r) => r.condition === 'half-core');
    // Fig. 7 left: B at half a core where a quota can be set (the same slowdown in every run), else beside the neighbour.
    if (SWEEP.length > 0) {
      const setting = settings.find((x) => x.condition === 'half-core') ?? settings[0]!;
      sweepCondition = setting.condition;
      sweepRuns = await sweep(cluster, labels, setting);
    }
  } finally {
    await stop(pair);
  }
  // One process × 2 threads, its worker threads pinned one per core; thread 1 beside the neighbour.
  const [c] = await Promise.all([startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 2 })]);
  try {
    const pid = c!.process.pid!;
    pin(pid, '0-1');
    // The worker threads are the two that work during a short job, created in slot order (ascending thread ids).
    const before = threadTimes(pid);
    await (await submitIterative(cluster, app.ref, { iterations: Math.ceil(ITERATIONS / 8), params: app.params, balance: 'static', nodes: 1 })).result();
    const after = threadTimes(pid);
    const workers = [...after].map(([tid, t]) => ({ tid, used: t - (before.get(tid) ?? 0) })).sort((a, b) => b.used - a.used).slice(0, 2).map((x) => x.tid).sort((a, b) => a - b);
    workers.forEach((tid, slot) => {
      pin(tid, String(slot), false);
      threadCpus.push({ slot, tid, cpu: slot });
    });
    const labels = new Map([[c!.id, 'C']]);
    oneProcess = await experiment('one process × 2 threads', cluster, labels, [{ condition: 'neighbour' }, { condition: 'quiet' }]);
    // The balancer's own cost: no neighbour, static and ruper alternately (both threads balanced by ruper).
    for (let rep = 0; rep < 3; rep++) {
      for (const balance of ['static', 'ruper'] as const) {
        const t0 = performance.now();
        await (await submitIterative(cluster, app.ref, { iterations: Math.ceil(ITERATIONS / 2), params: app.params, balance, nodes: 1, ruper: RUPER })).result();
        single.push({ balance, seconds: (performance.now() - t0) / 1000 });
        console.error(`overhead, ${balance}: ${single[single.length - 1]!.seconds.toFixed(2)} s`);
      }
    }
  } finally {
    await stop([c!]);
  }
} finally {
  quota?.remove();
  await cluster.close();
  await zk.stop();
}

async function stop(nodes: NodeProcess[]): Promise<void> {
  for (const n of nodes) n.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
}

const summary = {
  twoProcesses: summarize(twoProcesses, 'B'), oneProcess: summarize(oneProcess, 'C thread 1'), singleTenant: summarizeSingleTenant(oneProcess),
  ...(sweepRuns.length > 0 ? { sweep: { condition: sweepCondition, rows: summarizeSweep(sweepRuns) } } : {}),
};
print('Two processes × 1 thread, B beside stress-ng (Fig. 6–7 left)', summary.twoProcesses);
const halfCore = quota
  ? { measurable: true as const, cgroup: quota.path, summary: summarizeHalfCore(halfCoreRuns, twoProcesses.filter((r) => r.condition === 'quiet'), quota), runs: halfCoreRuns }
  : { measurable: false as const, reason: quotaUnavailable };
if (halfCore.measurable) {
  const h = halfCore.summary;
  console.log(`\nTwo processes × 1 thread, B's node process at a CPU quota of ${h.quotaUs}/${h.periodUs} µs (B had ${h.shareOfB.toFixed(2)} of its speed without the quota, ${h.speedOfBOverA.toFixed(2)} of A's, and used ${h.cpuOfB.toFixed(2)} cores; best possible ${h.bestOverStatic.toFixed(2)}× static)`);
  printTable([HEAD, ...h.strategies.map((x) => row(x.balance, x))]);
} else {
  console.log(`\nTwo processes, B at half a core: not measurable on this machine (${halfCore.reason})`);
}
print('One process × 2 threads, thread 1 beside stress-ng (Fig. 7 right)', summary.oneProcess);
console.log(`\nOne process × 2 threads, no neighbour (Fig. 8, a single tenant; in the static runs the slower thread ran at ${summary.singleTenant.threadSpeedRatio.toFixed(3)} of the faster one's speed)`);
printTable([HEAD, ...summary.singleTenant.strategies.map((x) => row(x.balance, x))]);
if (summary.sweep) {
  console.log(`\nIterations swept, two processes, B ${summary.sweep.condition === 'half-core' ? 'at half a core' : 'beside stress-ng'} (Fig. 7 left)`);
  printTable([['histories', 'balance', 'makespan s', 'processes\' finish gap s', 'gap ÷ makespan', '÷ ideal', 'resolution s'], ...summary.sweep.rows.map((x) => [x.iterations, x.balance, x.makespan, x.processGap, x.gapOverMakespan, x.overIdeal, x.resolution])]);
}
const singles = (balance: string) => single.filter((x) => x.balance === balance).map((x) => x.seconds);
const overhead = { static: median(singles('static')), ruper: median(singles('ruper')), ruperOverStatic: median(singles('ruper').map((x, k) => x / singles('static')[k]!)) - 1 };
console.log(`\noverhead without a neighbour (one process × 2 threads, median of 3 alternating pairs): static ${overhead.static.toFixed(2)} s, ruper ${overhead.ruper.toFixed(2)} s (${(100 * overhead.ruperOverStatic).toFixed(1)} %)`);
const results = {
  machine: machineInfo(),
  note: 'On a 2-core machine: each process (or worker thread) has a core of its own, the neighbour shares the second; the load average at the start is in machine.loadAverage (other work on the machine adds to the neighbour).',
  app: app.name, quick: QUICK, iterations: ITERATIONS, reps: REPS, ruper: RUPER, hogPhases: HOG_PHASES, phaseSeconds: PHASE_MS / 1000, threadCpus, sampleMs: SAMPLE_MS, sweep: SWEEP,
  summary, overhead, single, runs: twoProcesses, oneProcessRuns: oneProcess, halfCore, sweepRuns,
};
writeFileSync(resultsFile(RESULTS_NAME), `${JSON.stringify(results, null, 1)}\n`);
await writeIterativeCharts(RESULTS_NAME, results);
console.error(`wrote ${resultsFile(RESULTS_NAME).pathname}${QUICK ? ' (a quick run: not results)' : ''}`);
