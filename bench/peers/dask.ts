/**
 * Dask.distributed as a peer, measured on this machine: flat no-op throughput, a binary tree of
 * tasks spawned from inside tasks, and the time for an added worker to register and run its first
 * task, on a LocalCluster of 2 single-threaded worker processes on loopback. The measuring is done
 * by bench/peers/dask_bench.py under Debian's /usr/bin/python3 (where python3-distributed lives);
 * this script makes sure Dask is installed (scripts/ensure-dask.sh), runs it, prints a table and
 * writes bench/results/peers-dask.json.
 *
 *   npx tsx bench/peers/dask.ts [--n 20000] [--depth 12]   (the sizes bench/peers/small-tasks.ts uses for tidepool and Piscina) [--repeat 3]
 *
 * When Dask cannot be installed (ensure-dask.sh exits 3) the results file records
 * `{ skipped: true, reason }` and the script exits 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo, resultsFile } from '../machine.js';
import { printTable } from '../table.js';

/** Median and every sample of a repeated measurement. */
export interface DaskSamples {
  median: number;
  samples: number[];
}

/** A flat `client.map(noop, range(N))` measurement. */
export interface DaskFlat {
  tasks: number;
  seconds: DaskSamples;
  tasksPerSecond: DaskSamples;
  perTaskMicros: DaskSamples;
  /** N / median seconds. */
  medianTasksPerSecond: number;
  /** Median seconds / N, in µs. */
  medianPerTaskMicros: number;
  checked: string;
  /** Set on the sensitivity run with scheduler queuing off. */
  workerSaturation?: 'inf';
}

/** The spawned binary tree: 2^(depth+1) - 1 tasks. */
export interface DaskTree extends Omit<DaskFlat, 'workerSaturation'> {
  depth: number;
}

/** What bench/peers/dask_bench.py prints. */
export interface DaskBenchResult {
  peer: 'dask.distributed';
  versions: { dask: string; distributed: string; tornado: string; python: string; pythonExecutable: string };
  params: { n: number; depth: number; repeat: number };
  cluster: {
    kind: 'LocalCluster';
    nWorkers: number;
    threadsPerWorker: number;
    processes: boolean;
    scheduler: string;
    transport: string;
    multiprocessingMethod: string;
    /** distributed.scheduler.worker-saturation of the measured cluster (Dask's default: 1.1). */
    workerSaturation: number | 'inf';
    workers: Array<{ nthreads: number; memoryLimitBytes: number | null }>;
    startMs: number;
  };
  /** (a) at Dask's default configuration. */
  flat: DaskFlat;
  /** (a) again with scheduler queuing off (worker-saturation inf); null when skipped. */
  flatUnqueued: DaskFlat | null;
  /** (b) */
  tree: DaskTree;
  /** (c) from cluster.scale(n + 1) to the new worker's registration and to its first task done. */
  addWorker: { how: string; registeredMs: DaskSamples; firstTaskMs: DaskSamples };
  totalSeconds: number;
}

/** bench/results/peers-dask.json */
export type DaskPeerResults =
  | ({ skipped: false; machine: ReturnType<typeof machineInfo>; command: string } & DaskBenchResult)
  | { skipped: true; reason: string; machine: ReturnType<typeof machineInfo> };

const PYTHON = '/usr/bin/python3';

/** The project root (the first directory above this script with a package.json), from sources or built. */
function projectRoot(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    if (existsSync(new URL('package.json', dir))) return fileURLToPath(dir);
    if (dir.pathname === '/') throw new Error('no package.json above the benchmark');
  }
}

function fail(message: string): never {
  console.error(`peers/dask: ${message}`);
  process.exit(1);
}

function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer, got ${value}`);
  return n;
}

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    depth: { type: 'string', default: '12' },
    repeat: { type: 'string', default: '3' },
  },
});
const N = positiveInt('n', values.n);
const DEPTH = positiveInt('depth', values.depth);
const REPEAT = positiveInt('repeat', values.repeat);

const root = projectRoot();
const out = resultsFile('peers-dask');

// 1. Dask installed? ensure-dask.sh is quiet when it is; 3 means it could not be installed.
const ensure = spawnSync('bash', [`${root}scripts/ensure-dask.sh`], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'pipe'],
  encoding: 'utf8',
});
if (ensure.error) fail(`could not run scripts/ensure-dask.sh: ${ensure.error.message}`);
if (ensure.status === 3) {
  const lines = ensure.stderr.trim().split('\n');
  process.stderr.write(lines.slice(0, -1).map((l) => `${l}\n`).join(''));
  const reason = lines.at(-1)?.replace(/^ensure-dask: /, '') || 'Dask.distributed could not be installed';
  console.log(`peers/dask: skipped — ${reason}`);
  const skipped: DaskPeerResults = { skipped: true, reason, machine: machineInfo() };
  writeFileSync(out, JSON.stringify(skipped, null, 2) + '\n');
  console.log(`\nwrote ${fileURLToPath(out)}`);
  process.exit(0);
}
process.stderr.write(ensure.stderr);
if (ensure.status !== 0) fail(`scripts/ensure-dask.sh failed (exit ${ensure.status ?? ensure.signal})`);

// 2. Measure. Progress from Python goes straight to our stderr; stdout carries one JSON object.
const args = [`${root}bench/peers/dask_bench.py`, '--n', String(N), '--depth', String(DEPTH), '--repeat', String(REPEAT)];
const command = `${PYTHON} bench/peers/dask_bench.py --n ${N} --depth ${DEPTH} --repeat ${REPEAT}`;
const TIMEOUT_MS = 15 * 60_000;
const stdout = await new Promise<string>((resolve) => {
  const child = spawn(PYTHON, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  const timer = setTimeout(() => child.kill('SIGTERM'), TIMEOUT_MS);
  child.on('error', (e) => fail(`could not start ${PYTHON}: ${e.message}`));
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    if (code !== 0) fail(`${command} failed (${signal ? `killed by ${signal}` : `exit ${code}`})`);
    resolve(Buffer.concat(chunks).toString('utf8'));
  });
});

let result: DaskBenchResult;
try {
  result = JSON.parse(stdout.trim()) as DaskBenchResult;
} catch {
  fail(`dask_bench.py did not print one JSON object; its stdout was:\n${stdout}`);
}
if (result.peer !== 'dask.distributed' || !result.flat || !result.tree || !result.addWorker) {
  fail(`unexpected output from dask_bench.py:\n${stdout}`);
}

// 3. Report.
const fmt = (s: DaskSamples, unit: string, digits: number) => s.samples.map((x) => x.toFixed(digits)).join(' / ') + ` ${unit}`;
const { cluster, versions } = result;
console.log(
  `\nDask.distributed ${versions.distributed} (dask ${versions.dask}, Python ${versions.python}): ` +
    `LocalCluster of ${cluster.nWorkers} worker processes × ${cluster.threadsPerWorker} thread, ${cluster.transport}, ` +
    `worker-saturation ${cluster.workerSaturation}; median of ${result.params.repeat}\n`,
);
const rows: Array<Array<string | number>> = [['measurement', 'tasks', 'median', 'tasks/s', 'µs/task', 'samples']];
const flatRow = (label: string, f: DaskFlat | DaskTree) => [
  label, f.tasks, `${f.seconds.median.toFixed(2)} s`, f.medianTasksPerSecond, f.medianPerTaskMicros, fmt(f.seconds, 's', 2),
];
rows.push(flatRow('flat map, no-op', result.flat));
if (result.flatUnqueued) rows.push(flatRow('flat map, no-op, queuing off', result.flatUnqueued));
rows.push(flatRow(`spawned binary tree, D=${result.tree.depth}`, result.tree));
const { registeredMs, firstTaskMs } = result.addWorker;
rows.push(['added worker: registered', '-', `${registeredMs.median.toFixed(0)} ms`, '-', '-', fmt(registeredMs, 'ms', 0)]);
rows.push(['added worker: first task done', 1, `${firstTaskMs.median.toFixed(0)} ms`, '-', '-', fmt(firstTaskMs, 'ms', 0)]);
printTable(rows);

const record: DaskPeerResults = { skipped: false, machine: machineInfo(), command, ...result };
writeFileSync(out, JSON.stringify(record, null, 2) + '\n');
console.log(`\nwrote ${fileURLToPath(out)}`);
