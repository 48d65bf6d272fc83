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
 *
 * Run with the collector exposed (the heap is read after a full collection):
 *
 *   node --expose-gc --import tsx bench/memory-per-task.ts            (1,000,000 tasks each; writes bench/results/memory-per-task.json)
 *   node --expose-gc --import tsx bench/memory-per-task.ts --short    (20,000 tasks: a check that the bench runs)
 *
 * Needs ZooKeeper (scripts/ensure-zookeeper.sh).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect } from '../src/coord/connect.js';
import { GlobalVariables } from '../src/coord/recipes/global-variables.js';
import { parseWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { submitJob } from '../src/runtime/client/submit.js';
import { jobPaths } from '../src/runtime/job/job-paths.js';
import { awaitOutcome } from '../src/runtime/job/outcome.js';
import { TidepoolNode } from '../src/runtime/node/node.js';
import { taskPoolJob } from '../src/runtime/pool/task-pool-ref.js';
import { InProcessNetwork, InProcessTransport } from '../src/transport/in-process-transport.js';
import { ClusterSecret } from '../src/util/cluster-secret.js';
import { fourLetterWord, startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: {
  short: { type: 'boolean', default: false },
  tasks: { type: 'string' },
  'workflow-tasks': { type: 'string' },
} });
const SHORT = values.short;
const POOLED = Number(values.tasks ?? (SHORT ? 20_000 : 1_000_000));
const WORKFLOW = Number(values['workflow-tasks'] ?? (SHORT ? 20_000 : 1_000_000));
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

async function pooledTasks(): Promise<{ heapPerTask: number; ledgerPerTask: number; seconds: number }> {
  const zk = await startEnsemble({ size: 1 });
  const port = zk.servers[0]!.clientPort;
  const secret = ClusterSecret.random();
  const admin = await connect(zk.connectionString, { secret });
  const nodeClient = await connect(zk.connectionString, { secret });
  const HELD = new URL('./apps/held-fan.ts', import.meta.url).href;
  const node = await TidepoolNode.start({
    client: nodeClient, transport: new InProcessTransport('n-mem', InProcessNetwork.get(`mem-${randomBytes(3).toString('hex')}`)),
    workers: 1, nodeId: 'n-mem', secret, submittedHere: new Set([HELD]), progressIntervalMs: 250,
  });
  try {
    const heap0 = heapUsed();
    const zk0 = await zkDataBytes(port);
    const t0 = performance.now();
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
    const heap1 = heapUsed();
    const zk1 = await zkDataBytes(port);
    const vars = new GlobalVariables(admin, jobPaths(spec.id).vars);
    await vars.define('go', { rule: 'max' });
    await vars.setVar('go', 1);
    const end = await outcome;
    if (end.status !== 'done' || end.value !== POOLED + 1) throw new Error(`the fan ended ${JSON.stringify(end).slice(0, 200)}, not with ${POOLED + 1}`);
    return { heapPerTask: (heap1 - heap0) / POOLED, ledgerPerTask: (zk1 - zk0) / POOLED, seconds };
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

const machineBefore = machineInfo();
const pooled = await pooledTasks();
const workflow = workflowTasks();
const r = (x: number) => Math.round(x);
const ratio = (x: number, target: number) => Number((x / target).toFixed(2));
printTable([
  ['task', 'tasks', 'node heap B/task', 'target B', 'heap ÷ target', 'ledger (ZooKeeper) B/task'],
  ['pooled no-op (spawned fan)', POOLED, r(pooled.heapPerTask), POOLED_TARGET, ratio(pooled.heapPerTask, POOLED_TARGET), r(pooled.ledgerPerTask)],
  ['workflow task (loaded)', WORKFLOW, r(workflow.heapPerTask), WORKFLOW_TARGET, ratio(workflow.heapPerTask, WORKFLOW_TARGET), '—'],
]);
const machine = machineInfo();
const result = {
  pooled: { tasks: POOLED, heapBytesPerTask: r(pooled.heapPerTask), ledgerBytesPerTask: r(pooled.ledgerPerTask), targetBytes: POOLED_TARGET, heapOverTarget: ratio(pooled.heapPerTask, POOLED_TARGET), secondsToPool: Number(pooled.seconds.toFixed(1)) },
  workflow: { tasks: WORKFLOW, heapBytesPerTask: r(workflow.heapPerTask), targetBytes: WORKFLOW_TARGET, heapOverTarget: ratio(workflow.heapPerTask, WORKFLOW_TARGET) },
  loadAverageBefore: machineBefore.loadAverage,
  machine,
};
console.log(JSON.stringify(result));
if (!SHORT && values.tasks === undefined && values['workflow-tasks'] === undefined) writeFileSync(resultsFile('memory-per-task'), JSON.stringify(result, null, 2) + '\n');
