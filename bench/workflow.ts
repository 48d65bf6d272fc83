/**
 * The workflow layer against seed 004 (AME) §5–6, on node processes over loopback with a local
 * ZooKeeper, times scaled down (AME's seconds become milliseconds here):
 *   Fig. 6–9   dispatch rate and efficiency (Eq. 1) against task length, 16 tasks per core,
 *              centralized vs decentralized; plus the no-op dispatch rate of a 20,000-task bag
 *   Fig. 10–12 pairs of dependent tasks on different nodes, files of 1 KB / 1 MB / 10 MB
 *   Fig. 13    collocated vs isolated intermediate storage (1 MB pairs)
 *   Fig. 14    location-service latency (query and update round trips, sampled; waits for files not yet
 *              produced), peer transfer time: in the pairs runs and in the Montage run
 *   Table 1–2  the WfInstances Montage run (1,738 tasks) replayed: per-stage speed-up, makespan
 *              against its lower bound, bytes to shared storage peer-to-peer vs all-through-shared
 *
 *   npx tsx bench/workflow.ts --data DIR [--nodes 2] [--quick]
 * (DIR: the curated data set's root, holding workflows/wfformat-v1.5/…; see bench/curated-data.ts)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWorkflow, parseWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { readProvenance } from '../src/frameworks/workflow/provenance.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { WorkflowBuilder } from '../src/frameworks/workflow/workflow-builder.js';
import type { MemberReport } from '../src/frameworks/workflow/workflow-kind.js';
import { curatedPath, DATA_OPTION, MONTAGE_05D } from './curated-data.js';
import { startBenchCluster, sumOf } from './workflow-cluster.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '2' }, quick: { type: 'boolean', default: false }, ...DATA_OPTION } });
const NODES = Number(values.nodes);
const CORES = NODES; // one worker thread per node process
const MONTAGE = curatedPath(values.data, MONTAGE_05D, 'bench/workflow');
const bench = await startBenchCluster(NODES);
const { tmp, measure } = bench;
const sum = sumOf;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : 0, p50: at(0.5), p95: at(0.95) };
};
/** Fig. 14 samples of every member: location-service round trips, waits for files, transfers. */
const latencies = (members: MemberReport[]) => {
  const all = (k: 'queryMs' | 'updateMs' | 'waitMs' | 'transferMs') => stats(members.flatMap((x) => x[k]));
  return { query: all('queryMs'), update: all('updateMs'), wait: all('waitMs'), transfer: all('transferMs') };
};
const fileOf = (name: string, text: string) => {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
};

const zkIdlePerSecond = await bench.zkIdleRate();
const out: Record<string, unknown> = { zkIdlePerSecond, machine: machineInfo(), nodes: NODES, cores: CORES, note: 'node processes on loopback (one worker thread each) with a local ZooKeeper, on a 2-core machine shared with other engineers while measured; AME\'s seconds are scaled to milliseconds here' };

// ---- Fig. 6–9: dispatch rate and efficiency -------------------------------------------------------
const lengths = values.quick ? [0, 0.01] : [0, 0.001, 0.01, 0.1];
const dispatch: Record<string, unknown>[] = [];
for (const mode of ['centralized', 'decentralized'] as const) {
  for (const L of lengths) {
    const n = 16 * CORES;
    const file = fileOf(`bag-${L}.json`, syntheticWfFormat({ tasks: n, runtime: L, files: false }));
    const m = await measure(parseWorkflow(readFileSync(file, 'utf8'), file), { file, replay: 1, mode });
    dispatch.push({ mode, taskSeconds: L, tasks: n, seconds: m.span, tasksPerSecond: n / m.span, efficiency: L === 0 ? null : (L * n) / (m.span * CORES), wall: m.wall, zkRequests: m.zkRequests });
  }
  const bag = values.quick ? 2_000 : 20_000;
  const file = fileOf(`noop-${bag}.json`, syntheticWfFormat({ tasks: bag, runtime: 0, files: false }));
  const m = await measure(parseWorkflow(readFileSync(file, 'utf8'), file), { file, replay: 1, mode });
  dispatch.push({ mode, taskSeconds: 0, tasks: bag, seconds: m.span, tasksPerSecond: bag / m.span, efficiency: null, wall: m.wall, zkRequests: m.zkRequests });
}
out.dispatch = dispatch;
printTable([['mode', 'task s', 'tasks', 'span s', 'tasks/s', 'efficiency', 'ZK requests'], ...dispatch.map((d) => [d.mode as string, d.taskSeconds as number, d.tasks as number, (d.seconds as number).toFixed(3), (d.tasksPerSecond as number).toFixed(0), d.efficiency === null ? '–' : `${((d.efficiency as number) * 100).toFixed(1)} %`, d.zkRequests as number])]);

// ---- Fig. 10–14: pairs across nodes, file sizes, storage modes, location-service latency -----------
function pairs(count: number, seconds: number, bytes: number): WorkflowBuilder {
  const b = new WorkflowBuilder(`pairs-${bytes}`);
  for (let i = 0; i < count; i++) {
    // Tasks 2i and 2i+1 land on different nodes (round-robin by task number); the file ties them.
    if (bytes > 0) {
      b.task({ id: `a${i}`, runtime: seconds, outputs: [{ name: `f${i}`, size: bytes }] });
      b.task({ id: `b${i}`, runtime: seconds, inputs: [`f${i}`], outputs: [{ name: `g${i}`, size: 10 }] });
    } else {
      b.task({ id: `a${i}`, runtime: seconds });
      b.task({ id: `b${i}`, runtime: seconds, parents: [`a${i}`] });
    }
  }
  return b;
}
const PAIR_SECONDS = 0.05;
const pairCount = 8 * CORES;
const pairRows: Record<string, unknown>[] = [];
const latency: Record<string, unknown>[] = [];
const base = pairs(pairCount, PAIR_SECONDS, 0);
const baseline = await measure(base.build(), { builder: base, replay: 1, stealing: false });
for (const [label, bytes, storage] of [['1 KB', 1e3, 'collocated'], ['1 MB', 1e6, 'collocated'], ['10 MB', 1e7, 'collocated'], ['1 MB', 1e6, 'isolated']] as const) {
  const b = pairs(pairCount, PAIR_SECONDS, bytes);
  const m = await measure(b.build(), { builder: b, replay: 1, stealing: false, storage });
  const ideal = (2 * pairCount * PAIR_SECONDS) / CORES;
  pairRows.push({ file: label, storage, seconds: m.span, ideal, baseline: baseline.span, overheadPercent: ((m.span - baseline.span) / baseline.span) * 100, peerBytes: sum(m.result.members, 'bytesPeer'), zkRequests: m.zkRequests });
  latency.push({ run: `pairs, ${label}`, storage, ...latencies(m.result.members) });
}
out.pairs = { pairs: pairCount, taskSeconds: PAIR_SECONDS, baselineSeconds: baseline.span, rows: pairRows };
out.locationService = latency;
printTable([['file', 'storage', 'span s', 'no-file s', 'overhead', 'peer MB'], ...pairRows.map((r) => [r.file as string, r.storage as string, (r.seconds as number).toFixed(3), (r.baseline as number).toFixed(3), `${(r.overheadPercent as number).toFixed(1)} %`, ((r.peerBytes as number) / 1e6).toFixed(1)])]);

// ---- Table 1–2: Montage replay ------------------------------------------------------------------
/** Table 2 per stage: what each stage's tasks read from shared storage, from peers and locally, and wrote (the run's provenance records). */
function stageBytes(run: string | undefined): Record<string, { fromShared: number; peer: number; local: number; written: number }> {
  const out: Record<string, { fromShared: number; peer: number; local: number; written: number }> = {};
  if (run === undefined) return out;
  for (const r of readProvenance(run).records) {
    if (r.status !== 'ok') continue;
    const s = (out[r.transformation] ??= { fromShared: 0, peer: 0, local: 0, written: 0 });
    s.fromShared += r.bytesIn.shared;
    s.peer += r.bytesIn.peer;
    s.local += r.bytesIn.local;
    s.written += r.bytesOut;
  }
  return out;
}
const SCALE = values.quick ? 0.0005 : 0.002;
const montage = await loadWorkflow(MONTAGE);
const bound = Math.max(montage.counts.criticalPath, montage.counts.totalRuntime / CORES) * SCALE;
const runs: Record<string, unknown> = {};
for (const storage of ['collocated', 'shared'] as const) {
  const m = await measure(montage, { file: MONTAGE, replay: SCALE, storage });
  if (storage === 'collocated') latency.push({ run: 'Montage', storage, ...latencies(m.result.members) });
  runs[storage] = {
    span: m.span, wall: m.wall, lowerBound: bound, overBound: m.span / bound, zkRequests: m.zkRequests,
    toShared: sum(m.result.members, 'bytesToShared'), fromShared: sum(m.result.members, 'bytesFromShared'), peer: sum(m.result.members, 'bytesPeer'),
    stages: Object.fromEntries([...m.stages].map(([k, s]) => [k, { oneCoreSeconds: s.runtime * SCALE, seconds: (s.last - s.first) / 1000, speedup: (s.runtime * SCALE) / ((s.last - s.first) / 1000) }])),
    stageBytes: stageBytes(m.result.run),
  };
}
const col = runs.collocated as { toShared: number; fromShared: number };
const sh = runs.shared as { toShared: number; fromShared: number };
out.montage = { file: MONTAGE_05D, tasks: montage.counts.tasks, scale: SCALE, criticalPath: montage.counts.criticalPath, totalRuntime: montage.counts.totalRuntime, runs, sharedTrafficReductionPercent: (1 - (col.toShared + col.fromShared) / (sh.toShared + sh.fromShared)) * 100 };
printTable([['storage', 'span s', 'lower bound s', '× bound', 'to shared MB', 'from shared MB', 'peer MB'], ...Object.entries(runs).map(([k, r]) => {
  const x = r as { span: number; lowerBound: number; overBound: number; toShared: number; fromShared: number; peer: number };
  return [k, x.span.toFixed(2), x.lowerBound.toFixed(2), x.overBound.toFixed(2), (x.toShared / 1e6).toFixed(1), (x.fromShared / 1e6).toFixed(1), (x.peer / 1e6).toFixed(1)];
})]);
printTable([['run', 'storage', 'query ms p50/p95 (n)', 'update ms p50/p95 (n)', 'wait ms p50/p95 (n)', 'transfer ms p50/p95 (n)'], ...latency.map((l) => {
  const f = (s: unknown) => {
    const x = s as { p50: number; p95: number; n: number };
    return x.n === 0 ? '–' : `${x.p50.toFixed(2)} / ${x.p95.toFixed(2)} (${x.n})`;
  };
  return [l.run as string, l.storage as string, f(l.query), f(l.update), f(l.wait), f(l.transfer)];
})]);
console.log(`shared-storage traffic ${((out.montage as { sharedTrafficReductionPercent: number }).sharedTrafficReductionPercent).toFixed(1)} % lower peer-to-peer than all-through-shared`);

writeFileSync(resultsFile(values.quick ? 'workflow-quick' : 'workflow'), JSON.stringify(out, null, 2) + '\n');
await bench.close();
