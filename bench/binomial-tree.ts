/**
 * Irregular trees: counting a UTS binomial tree (examples/tasks/binomial-tree.ts) on an embedded cluster
 * against the same expansion code in a plain loop on one thread (no runtime). Speed-up on 1 and 2 workers
 * (one node with 1 or 2 worker threads, and 2 nodes × 1 worker, where work moves only by stealing).
 * The *ceiling* is what this machine gives two threads right now: two plain loops on two threads at once
 * against one alone (2·T1/T2); a 2-worker speed-up is also given as a fraction of it. CPU seconds of the
 * process per run show the runtime's own cost whatever else the machine runs.
 *
 *   npx tsx bench/binomial-tree.ts [--repeat 3] [--large]
 *
 * T3 (4,112,897 nodes) always; `--large` adds t3-100m (95,419,753 nodes; minutes; without it, the figures of the
 * last run that had it are kept, with their date). Fastest of the repeats
 * (interference from other processes only ever slows a run down). Writes bench/results/binomial-tree.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Cluster } from '../src/runtime/client/cluster.js';
import { settledTallies } from '../src/runtime/job/tallies.js';
import { secretFile, secretIn, startNodeProcess } from '../test/support/node-process.js';
import { waitFor } from '../test/support/wait.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import type { TaskRef } from '../src/runtime/worker/task.js';
import { countSequentially, rootTask, TREES, type TreeCount, type TreeShape } from '../examples/tasks/binomial-tree.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '3' }, large: { type: 'boolean', default: false } } });
const REPEAT = Number(values.repeat);
if (!Number.isInteger(REPEAT) || REPEAT < 1) throw new Error(`--repeat: "${values.repeat}" is not a positive whole number`);
/** Built benches (node dist/bench/…) load built modules; from sources (tsx) the .ts ones. */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const TREE: TaskRef = { module: new URL(`../examples/tasks/binomial-tree${EXT}`, import.meta.url).href, export: 'default' };
const SETUPS = [{ nodes: 1, workers: 1 }, { nodes: 1, workers: 2 }, { nodes: 2, workers: 1 }] as const;

interface Run { seconds: number; cpuSeconds: number; tasks: number; steals: number }

/** The plain loop, timed: wall and CPU seconds, and the node count. */
function sequential(shape: TreeShape): { seconds: number; cpuSeconds: number; nodes: number } {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const { nodes } = countSequentially(shape);
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - t) / 1000, cpuSeconds: (used.user + used.system) / 1e6, nodes };
}

/**
 * Plain loops on `threads` threads at once (no runtime), each counting the whole tree: the seconds of the slowest
 * loop, timed inside its thread (a thread's start-up and module loading are not the loop's: counted in, they made
 * one thread look slower than the main thread and the ceiling lower than it is).
 */
async function plainThreads(shape: TreeShape, expected: number, threads: number): Promise<number> {
  const load = EXT === '.ts' ? "await (await import('tsx/esm/api')).register();" : '';
  const code = `import { parentPort, workerData } from 'node:worker_threads'; ${load}
    const { countSequentially } = await import(workerData.module);
    parentPort.postMessage('ready');
    parentPort.once('message', () => {
      const t = performance.now();
      const { nodes } = countSequentially(workerData.shape);
      parentPort.postMessage({ nodes, seconds: (performance.now() - t) / 1000 });
    });`;
  const workers = await Promise.all(Array.from({ length: threads }, () => new Promise<Worker>((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { module: TREE.module, shape } });
    w.once('message', () => resolve(w));
    w.once('error', reject);
  })));
  // Every thread loaded: the loops start together.
  const seconds = await Promise.all(workers.map((w) => new Promise<number>((resolve, reject) => {
    w.once('message', (r: { nodes: number; seconds: number }) => (r.nodes === expected ? resolve(r.seconds) : reject(new Error(`plain thread counted ${r.nodes}`))));
    w.once('error', reject);
    w.postMessage('go');
  })));
  await Promise.all(workers.map((w) => w.terminate()));
  return Math.max(...seconds);
}

/** Until every node of the cluster is idle again (released by the previous job), so that the next job gets them all. */
function allIdle(cluster: Cluster): Promise<void> {
  return waitFor(async () => (await cluster.nodes()).every((n) => n.assignment === ''), 'the nodes to be released by the previous job');
}

/** One job on a running cluster, from submit to result. */
async function parallel(cluster: Cluster, shape: TreeShape, expected: number, remote = false): Promise<Run> {
  await allIdle(cluster);
  let steals = 0;
  const off = cluster.on((e) => { if (e.type === 'steal') steals++; });
  try {
    const t = performance.now();
    const cpu = process.cpuUsage();
    const job = await cluster.submit(TREE, rootTask(shape));
    const outcome = await job.outcome();
    const seconds = (performance.now() - t) / 1000;
    const used = process.cpuUsage(cpu);
    if (outcome.status !== 'done') throw new Error(`the job ended ${outcome.status}`);
    const { nodes } = outcome.value as TreeCount;
    if (nodes !== expected) throw new Error(`parallel count ${nodes}, expected ${expected}`);
    // Steals between node processes are counted where tasks leave, in the nodes' tallies (the events stay there).
    if (remote) steals = (await settledTallies(cluster.coordination, job.id)).total.stealsOut;
    return { seconds, cpuSeconds: (used.user + used.system) / 1e6, tasks: outcome.completions, steals };
  } finally {
    off();
  }
}

const fastest = (runs: Run[]) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));

/** The tree on 2 `tidepool node` processes × 1 worker over a 3-server ZooKeeper ensemble, all on loopback. */
async function onProcesses(shape: TreeShape, expected: number): Promise<{ runs: Run[]; best: Run }> {
  const zk = await startEnsemble({ size: 3 });
  const secret = secretFile();
  const nodes = await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 })));
  const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  try {
    await waitFor(async () => (await cluster.nodes()).length >= 2, 'both node processes seen by this session'); // it may lag behind the nodes'
    await parallel(cluster, TREES.small, countSequentially(TREES.small).nodes, true); // loads the task module on every worker
    const runs: Run[] = [];
    for (let i = 0; i < REPEAT; i++) runs.push(await parallel(cluster, shape, expected, true));
    return { runs, best: fastest(runs) };
  } finally {
    await cluster.close();
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await zk.stop();
  }
}
const machine = machineInfo();
const trees = values.large ? (['t3', 't3-100m'] as const) : (['t3'] as const);
const results = [];
for (const name of trees) {
  const shape = TREES[name];
  const plainRuns = Array.from({ length: REPEAT }, () => sequential(shape));
  const expected = plainRuns[0]!.nodes; // every other count is checked against the plain loop's
  if (plainRuns.some((r) => r.nodes !== expected)) throw new Error('the plain loop counted differently between runs');
  const seq = plainRuns.map((r) => r.seconds);
  const alone: number[] = [];
  const pair: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    alone.push(await plainThreads(shape, expected, 1));
    pair.push(await plainThreads(shape, expected, 2));
  }
  const ceiling = (2 * Math.min(...alone)) / Math.min(...pair);
  const setups: Array<{ nodes: number; workers: number; processes?: true; runs: Run[]; best: Run }> = [];
  for (const setup of SETUPS) {
    const cluster = await Cluster.embedded({ ...setup, progressIntervalMs: 0 });
    try {
      await parallel(cluster, TREES.small, countSequentially(TREES.small).nodes); // loads the task module on every worker
      const runs: Run[] = [];
      for (let i = 0; i < REPEAT; i++) runs.push(await parallel(cluster, shape, expected));
      setups.push({ ...setup, runs, best: fastest(runs) });
    } finally {
      await cluster.close();
    }
  }
  if (name === 't3') setups.push({ nodes: 2, workers: 1, processes: true, ...(await onProcesses(shape, expected)) });
  // The baseline is the fastest plain loop, on the main thread or alone on a worker thread (where the runtime's tasks run too).
  const seqBest = Math.min(...seq, ...alone);
  const rows = setups.map((s) => ({
    setup: s.processes ? '2 node processes × 1 worker, ZooKeeper' : `${s.nodes} node${s.nodes > 1 ? 's' : ''} × ${s.workers} worker${s.workers > 1 ? 's' : ''}`,
    ...(s.processes ? { processes: true } : {}),
    nodes: s.nodes, workers: s.workers, seconds: s.best.seconds, speedup: seqBest / s.best.seconds,
    efficiency: seqBest / s.best.seconds / (s.nodes * s.workers),
    ofCeiling: s.nodes * s.workers === 2 ? seqBest / s.best.seconds / ceiling : null,
    // Against the runtime on one worker (which has run the tree faster than the plain loop here): the scaling alone.
    overOneWorker: setups[0]!.best.seconds / s.best.seconds,
    // This process's CPU: the runtime's own cost where the nodes run here; node processes' CPU is not in it.
    cpuSeconds: s.processes ? null : s.best.cpuSeconds, tasks: s.best.tasks, steals: s.best.steals, runs: s.runs,
  }));
  console.log(`\n${name}: ${expected.toLocaleString('en-US')} nodes (b0 ${shape.b0}, q ${shape.q}, m ${shape.m}, seed ${shape.seed}); fastest of ${REPEAT}`);
  printTable([
    ['setup', 'seconds', 'speed-up', 'efficiency', 'of ceiling', '÷ 1 worker', 'CPU s', 'tasks', 'steals'],
    ['plain loop (no runtime; fastest on the main thread or a thread alone)', seqBest, 1, 1, '', '', Math.min(...plainRuns.map((r) => r.cpuSeconds)), 1, 0],
    ['ceiling: 2 plain loops at once', '', ceiling, ceiling / 2, '', '', '', '', ''],
    ...rows.map((r) => [r.setup, r.seconds, r.speedup, r.efficiency, r.ofCeiling ?? '', r.overOneWorker, r.cpuSeconds ?? '–', r.tasks, r.steals]),
  ]);
  results.push({ tree: name, shape, nodes: expected, baselineSeconds: seqBest, sequentialSeconds: seq, sequentialCpuSeconds: plainRuns.map((r) => r.cpuSeconds), plainThreadSeconds: { alone, pair }, ceiling, rows, measured: machine.date });
}
// Without --large, the large tree's figures of an earlier run are kept (each tree says when it was measured).
const file = resultsFile('binomial-tree');
const earlier = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { machine: { date: string }; trees: Array<{ tree: string; measured?: string }> }) : undefined;
const kept = (earlier?.trees ?? []).filter((t) => !trees.some((name) => name === t.tree)).map((t) => ({ ...t, measured: t.measured ?? earlier!.machine.date }));
writeFileSync(file, `${JSON.stringify({ machine, repeat: REPEAT, trees: [...results, ...kept] }, null, 2)}\n`);
