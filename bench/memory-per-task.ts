/**
 * What a task costs in memory (issue #31 item 3), measured, with the targets as ratios:
 *
 * - **pooled task**: one node (in this process, 1 worker) on a real ZooKeeper server holds a spawned fan
 *   of `--tasks` no-op tasks (bench/apps/held-fan.ts: the root spawns them, then holds the only worker
 *   until the job's `go` variable is set, so every child waits in the node's pool). Node heap per task:
 *   the main thread's heap after a full collection, with the fan pooled, minus before the job, ÷ tasks
 *   (the worker thread's heap is not the node's pool and is not counted). Ledger bytes per task:
 *   ZooKeeper's own `zk_approximate_data_size` (paths and data of every znode, from `mntr`) with the fan
 *   recorded, minus before, ÷ tasks. Target: ≤ 512 B of node heap per pooled task.
 * - **workflow task**: a synthetic WfFormat workflow of `--workflow-tasks` tasks loaded as `tidepool
 *   workflow` loads it (parsed, validated, compiled); heap of the loaded workflow ÷ tasks, its text
 *   dropped first. Target: ≤ 2 KB per workflow task. (The loaded workflow only: what a running workflow
 *   adds per task — its pool tasks, ledger records, file locations — is not measured here yet.)
 * - **service task**: a `parallelFor` of `--service-tasks` iterations (100,000) through a service
 *   (`startService` over HTTPS on loopback, one embedded node with 2 workers, all in this process, as
 *   bench/service.ts runs Tables 1 and 2). Every iteration waits until a moment 30 s (short: 5 s) after the
 *   loop starts, so the batch is held in flight; the heap is sampled after full collections every 250 ms
 *   while it runs, and the highest sample minus the heap before the loop, ÷ iterations, is the cost of a
 *   service task to the whole process — client (the captured batch), service and node together.
 *
 * Run with the collector exposed (the heap is read after a full collection):
 *
 *   node --expose-gc --import tsx bench/memory-per-task.ts            (1,000,000 tasks each; writes bench/results/memory-per-task.json)
 *   node --expose-gc --import tsx bench/memory-per-task.ts --short    (20,000 pooled and workflow tasks, 5,000 service tasks: a check that the bench runs)
 *
 * Needs ZooKeeper (scripts/ensure-zookeeper.sh).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { connect } from '../src/coord/connect.js';
import { GlobalVariables } from '../src/coord/recipes/global-variables.js';
import { parseWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { Distribution, startService } from '../src/frameworks/service/index.js';
import { Cluster } from '../src/runtime/client/cluster.js';
import { submitJob } from '../src/runtime/client/submit.js';
import { jobPaths } from '../src/runtime/job/job-paths.js';
import { awaitOutcome } from '../src/runtime/job/outcome.js';
import { TidepoolNode } from '../src/runtime/node/node.js';
import { taskPoolJob } from '../src/runtime/pool/task-pool-ref.js';
import { InProcessNetwork, InProcessTransport } from '../src/transport/in-process-transport.js';
import { ClusterSecret } from '../src/util/cluster-secret.js';
import { selfSignedCert } from '../test/frameworks/service/tls.js';
import { fourLetterWord, startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: {
  short: { type: 'boolean', default: false },
  tasks: { type: 'string' },
  'workflow-tasks': { type: 'string' },
  'service-tasks': { type: 'string' },
} });
const SHORT = values.short;
const POOLED = Number(values.tasks ?? (SHORT ? 20_000 : 1_000_000));
const WORKFLOW = Number(values['workflow-tasks'] ?? (SHORT ? 20_000 : 1_000_000));
const SERVICE = Number(values['service-tasks'] ?? (SHORT ? 5_000 : 100_000));
const SERVICE_HOLD_MS = SHORT ? 5_000 : 30_000;
const POOLED_TARGET = 512;
const WORKFLOW_TARGET = 2048;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('error: run with --expose-gc (node --expose-gc --import tsx bench/memory-per-task.ts): the heap is read after a full collection');
  process.exit(2);
}

/** The main thread's heap after full collections (a few: weak references and finalizers settle). */
function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

/** ZooKeeper's own count of the bytes its tree holds (paths and data), from `mntr`. */
async function zkDataBytes(port: number): Promise<number> {
  const line = (await fourLetterWord(port, 'mntr')).split('\n').find((l) => l.startsWith('zk_approximate_data_size'));
  if (!line) throw new Error('mntr did not report zk_approximate_data_size');
  return Number(line.split(/\s+/)[1]);
}

/** Sessions of the bench's clients (ms): ZooKeeper caps it at its maxSessionTimeout (20 ticks: 40 s by default). */
const SESSION_MS = 40_000;

async function pooledTasks(): Promise<{ heapPerTask: number; ledgerPerTask: number; seconds: number; longestStallMs: number }> {
  // A ledger of a million records does not fit the tests' 128 MiB ZooKeeper (it stalls and drops its sessions near 100,000).
  const zk = await startEnsemble({ size: 1, heapMb: 3072 });
  const port = zk.servers[0]!.clientPort;
  const secret = ClusterSecret.random();
  const admin = await connect(zk.connectionString, { secret, sessionTimeoutMs: SESSION_MS });
  const nodeClient = await connect(zk.connectionString, { secret, sessionTimeoutMs: SESSION_MS });
  const HELD = new URL('./apps/held-fan.ts', import.meta.url).href;
  const node = await TidepoolNode.start({
    client: nodeClient, transport: new InProcessTransport('n-mem', InProcessNetwork.get(`mem-${randomBytes(3).toString('hex')}`)),
    workers: 1, nodeId: 'n-mem', secret, submittedHere: new Set([HELD]), progressIntervalMs: 250,
  });
  try {
    const heap0 = heapUsed();
    const zk0 = await zkDataBytes(port);
    const t0 = performance.now();
    // How long the node's event loop (this process's main thread) stalls while the fan is recorded and pooled.
    const stalls = monitorEventLoopDelay({ resolution: 20 });
    stalls.enable();
    let lastReport = 0;
    const offProgress = node.on((e) => {
      if (e.type !== 'progress' || performance.now() - lastReport < 10_000) return;
      lastReport = performance.now();
      process.stderr.write(`  ${((lastReport - t0) / 1000).toFixed(0)} s: ${e.pooled} pooled, event loop's longest stall so far ${(stalls.max / 1e6).toFixed(0)} ms\n`);
    });
    const spec = await submitJob(admin, { ...taskPoolJob({ module: HELD, export: 'default' }, { fan: POOLED }), nodes: 1, secret });
    const outcome = awaitOutcome(admin, spec.id);
    // Every child recorded and waiting in the pool (the root holds the only worker).
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => { off(); reject(new Error(`the fan of ${POOLED} tasks was not pooled within 20 minutes`)); }, 20 * 60_000);
      const off = node.on((e) => {
        if (e.type === 'progress' && e.pooled >= POOLED) { clearTimeout(deadline); off(); resolve(); }
      });
    });
    const seconds = (performance.now() - t0) / 1000;
    stalls.disable();
    offProgress();
    const heap1 = heapUsed();
    const zk1 = await zkDataBytes(port);
    process.stderr.write(`  pooled: ${Math.round((heap1 - heap0) / POOLED)} B of node heap and ${Math.round((zk1 - zk0) / POOLED)} B in ZooKeeper per task; now running the fan to its end\n`);
    const vars = new GlobalVariables(admin, jobPaths(spec.id).vars);
    await vars.define('go', { rule: 'max' });
    await vars.setVar('go', 1);
    const end = await outcome;
    if (end.status !== 'done' || end.value !== POOLED + 1) throw new Error(`the fan ended ${JSON.stringify(end).slice(0, 200)}, not with ${POOLED + 1}`);
    return { heapPerTask: (heap1 - heap0) / POOLED, ledgerPerTask: (zk1 - zk0) / POOLED, seconds, longestStallMs: stalls.max / 1e6 };
  } finally {
    await node.shutdown({ handOver: false });
    await nodeClient.close();
    await admin.close();
    await zk.stop();
  }
}

function workflowTasks(): { heapPerTask: number } {
  const heap0 = heapUsed();
  let text: string | undefined = syntheticWfFormat({ tasks: WORKFLOW });
  const loaded = parseWorkflow(text, `synthetic-${WORKFLOW}.json`);
  text = undefined; // what stays is the loaded workflow (and any part of the text it still refers to)
  const heap1 = heapUsed();
  if (loaded.counts.tasks !== WORKFLOW) throw new Error(`loaded ${loaded.counts.tasks} tasks, not ${WORKFLOW}`);
  return { heapPerTask: (heap1 - heap0) / WORKFLOW };
}

async function serviceTasks(): Promise<{ heapPerTask: number; seconds: number }> {
  const tls = selfSignedCert();
  const token = 'bench-token-0123456789abcdef';
  const cluster = await Cluster.embedded({ nodes: 1, workers: 2 });
  const service = await startService({ cluster, tls, token, port: 0, limits: { timeoutMs: 600_000, memoryMb: 256 } });
  const remote = await Distribution.connect(service.url, { token, ca: tls.cert });
  try {
    await remote.parallelFor(0, 4, () => undefined); // the service's job, its sandboxes and connections exist before the baseline
    const heap0 = heapUsed();
    let peak = heap0;
    const until = Date.now() + SERVICE_HOLD_MS;
    const t0 = performance.now();
    let over = false;
    const loop = remote.parallelFor(0, SERVICE, () => {
      while (Date.now() < until) { /* held: the batch stays in flight */ }
    }).finally(() => (over = true));
    while (!over) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (!over) peak = Math.max(peak, heapUsed());
    }
    await loop;
    return { heapPerTask: (peak - heap0) / SERVICE, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await remote.close();
    await service.close();
    await cluster.close();
  }
}

const machineBefore = machineInfo();
const pooled = await pooledTasks();
const workflow = workflowTasks();
const served = await serviceTasks();
const r = (x: number) => Math.round(x);
const ratio = (x: number, target: number) => Number((x / target).toFixed(2));
printTable([
  ['task', 'tasks', 'node heap B/task', 'target B', 'heap ÷ target', 'ledger (ZooKeeper) B/task'],
  ['pooled no-op (spawned fan)', POOLED, r(pooled.heapPerTask), POOLED_TARGET, ratio(pooled.heapPerTask, POOLED_TARGET), r(pooled.ledgerPerTask)],
  ['workflow task (loaded)', WORKFLOW, r(workflow.heapPerTask), WORKFLOW_TARGET, ratio(workflow.heapPerTask, WORKFLOW_TARGET), '—'],
  ['service task (parallelFor, held in flight; client + service + node)', SERVICE, r(served.heapPerTask), '—', '—', '—'],
]);
process.stdout.write(`pooled: ${POOLED} tasks recorded and pooled in ${pooled.seconds.toFixed(1)} s; the node's event loop stalled ${r(pooled.longestStallMs)} ms at most meanwhile (sessions of ${SESSION_MS / 1000} s)\n`);
const machine = machineInfo();
const result = {
  pooled: { tasks: POOLED, heapBytesPerTask: r(pooled.heapPerTask), ledgerBytesPerTask: r(pooled.ledgerPerTask), targetBytes: POOLED_TARGET, heapOverTarget: ratio(pooled.heapPerTask, POOLED_TARGET), secondsToPool: Number(pooled.seconds.toFixed(1)), longestEventLoopStallMs: r(pooled.longestStallMs) },
  workflow: { tasks: WORKFLOW, heapBytesPerTask: r(workflow.heapPerTask), targetBytes: WORKFLOW_TARGET, heapOverTarget: ratio(workflow.heapPerTask, WORKFLOW_TARGET) },
  service: { tasks: SERVICE, heapBytesPerTask: r(served.heapPerTask), heldMs: SERVICE_HOLD_MS, seconds: Number(served.seconds.toFixed(1)) },
  loadAverageBefore: machineBefore.loadAverage,
  machine,
};
console.log(JSON.stringify(result));
if (!SHORT && values.tasks === undefined && values['workflow-tasks'] === undefined && values['service-tasks'] === undefined) writeFileSync(resultsFile('memory-per-task'), JSON.stringify(result, null, 2) + '\n');
