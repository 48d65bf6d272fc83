/**
 * The runtime's own costs on this machine (embedded cluster, worker threads):
 * - framework overhead: counting the composition tree with a plain loop vs. tidepool on 1 worker;
 * - parallel efficiency on 2 workers (one node) and on 2 nodes × 1 worker;
 * - join-to-first-task: from assigning an idle node to a running job to its first stolen task;
 * - drain: how long a node holding ~1,000 queued tasks takes to hand them all over.
 *
 *   npx tsx bench/runtime.ts [--n 24] [--work 40] [--repeat 3]
 *
 * Writes bench/results/runtime.json.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Cluster, type ClusterEvent } from '../src/runtime/client/cluster.js';
import type { TaskRef } from '../src/runtime/worker/task.js';
import { countSequentially, rootState } from '../test/runtime/apps/compositions.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '24' }, work: { type: 'string', default: '40' }, repeat: { type: 'string', default: '3' } } });
const N = Number(values.n);
const WORK = Number(values.work);
const REPEAT = Number(values.repeat);
/** Built benches (node dist/bench/…) load built modules; from sources (tsx) the .ts ones. */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const COMPOSITIONS: TaskRef = { module: new URL(`../test/runtime/apps/compositions${EXT}`, import.meta.url).href, export: 'default' };
const FAN: TaskRef = { module: new URL(`../test/runtime/apps/sleepy-fan${EXT}`, import.meta.url).href, export: 'default' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function sequential(): number {
  const t = performance.now();
  const count = countSequentially(N, WORK);
  if (count !== 2 ** N) throw new Error('wrong sequential count');
  return (performance.now() - t) / 1000;
}

async function tidepool(nodes: number, workers: number): Promise<number> {
  const cluster = await Cluster.embedded({ nodes, workers, progressIntervalMs: 0 });
  try {
    const t = performance.now();
    const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK));
    const count = await job.result<number>();
    if (count !== 2 ** N) throw new Error(`wrong count ${count}`);
    return (performance.now() - t) / 1000;
  } finally {
    await cluster.close();
  }
}

/** Assign an idle node to a running job; time until it has stolen its first task. */
async function joinToFirstTask(): Promise<number> {
  const cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 0 });
  try {
    const job = await cluster.submit(COMPOSITIONS, rootState(N, WORK), { nodes: 1 });
    const events: Array<ClusterEvent & { at: number }> = [];
    cluster.on((e) => events.push({ ...e, at: performance.now() }));
    await new Promise<void>((resolve) => {
      const off = cluster.on((e) => { if (e.type === 'leader') { off(); resolve(); } });
    });
    const idle = (await cluster.nodes()).find((n) => n.assignment === '')!.id;
    const t = performance.now();
    await cluster.scale(job.id, 2);
    const first = await new Promise<number>((resolve) => {
      const found = events.find((e) => e.type === 'steal' && e.to === idle);
      if (found) return resolve(found.at);
      const off = cluster.on((e) => { if (e.type === 'steal' && e.to === idle) { off(); resolve(performance.now()); } });
    });
    await job.result();
    return first - t;
  } finally {
    await cluster.close();
  }
}

/** One node queues ~1,000 spawned tasks; a second node joins; the first drains: time to hand over. */
async function drainQueued(): Promise<{ ms: number; migrated: number }> {
  const cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 0 });
  try {
    const job = await cluster.submit(FAN, { fanout: 1000, spin: 2_000_000, root: true }, { nodes: 1 });
    // The scheduler assigns the job's node just after submission.
    let busy: string | undefined;
    while (!(busy = cluster.localNodes().find((n) => n.currentJob === job.id)?.id)) await new Promise((r) => setTimeout(r, 5));
    const node = cluster.localNodes().find((n) => n.id === busy)!;
    while ((node.load()?.pooled ?? 0) < 990) await new Promise((r) => setTimeout(r, 5));
    let migrated = 0;
    cluster.on((e) => { if (e.type === 'migration' && e.from === node.id) migrated++; });
    await cluster.scale(job.id, 2); // the idle node joins, so there is somewhere to migrate to
    const t = performance.now();
    await cluster.drain(node.id);
    await new Promise<void>((resolve) => {
      const off = cluster.on((e) => { if (e.type === 'job-left' && e.node === node.id) { off(); resolve(); } });
    });
    const ms = performance.now() - t;
    if ((await job.result<number>()) !== 1001) throw new Error('wrong fan count');
    return { ms, migrated };
  } finally {
    await cluster.close();
  }
}

const seq = median(Array.from({ length: REPEAT }, sequential));
const one: number[] = [];
const two: number[] = [];
const twoNodes: number[] = [];
for (let i = 0; i < REPEAT; i++) {
  one.push(await tidepool(1, 1));
  two.push(await tidepool(1, 2));
  twoNodes.push(await tidepool(2, 1));
}
const joins: number[] = [];
for (let i = 0; i < REPEAT; i++) joins.push(await joinToFirstTask());
const drains: Array<{ ms: number; migrated: number }> = [];
for (let i = 0; i < REPEAT; i++) drains.push(await drainQueued());

const t1 = median(one);
const rows = [
  { setup: 'plain loop (no runtime)', seconds: seq, speedup: 1, efficiency: 1 },
  { setup: 'tidepool 1 node × 1 worker', seconds: t1, speedup: seq / t1, efficiency: seq / t1 },
  { setup: 'tidepool 1 node × 2 workers', seconds: median(two), speedup: seq / median(two), efficiency: seq / median(two) / 2 },
  { setup: 'tidepool 2 nodes × 1 worker', seconds: median(twoNodes), speedup: seq / median(twoNodes), efficiency: seq / median(twoNodes) / 2 },
];
console.log(`composition tree of n=${N} (${2 ** N} nodes, ${WORK} ops each), median of ${REPEAT}, embedded cluster on ${machineInfo().cpus} cores\n`);
printTable([['setup', 'seconds', 'speedup', 'efficiency'], ...rows.map((r) => [r.setup, r.seconds, r.speedup, r.efficiency])]);
const overheadPercent = (100 * (t1 - seq)) / seq;
const drainMs = median(drains.map((d) => d.ms));
console.log(`\nframework overhead on 1 worker: ${overheadPercent.toFixed(1)} %`);
console.log(`join-to-first-task: median ${median(joins).toFixed(1)} ms (runs: ${joins.map((j) => j.toFixed(1)).join(', ')})`);
console.log(`drain of a node holding ~1,000 queued tasks: median ${drainMs.toFixed(0)} ms (${drains.map((d) => `${d.ms.toFixed(0)} ms/${d.migrated} tasks`).join(', ')})`);
writeFileSync(resultsFile('runtime'), `${JSON.stringify({
  machine: machineInfo(), n: N, work: WORK, repeat: REPEAT, rows, overheadPercent,
  joinToFirstTaskMs: joins, drain: drains,
}, null, 2)}\n`);
