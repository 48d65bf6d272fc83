/**
 * Seed 003 §VI-E (Table IV, Fig. 6–7): five jobs on a 16-node pool, arriving at 0, 1, 3, 7 and 7
 * minutes, each the same Stencil2D-like job (min 4, max 16 nodes), scheduled by the resource
 * manager's own code (ManagerCore: policy + split-phase executor) in simulated time:
 * - rigid FCFS, sizes drawn uniformly from [4, 16] (mean of three draws, as the seed);
 * - moldable (equipartition at launch only, T_gap = ∞);
 * - malleable (equipartition, T_gap = 40, 100, 500 s).
 * Jobs are modelled, not run: perfect speedup, a job's work fixed so that the pool's node-seconds
 * match the seed's (utilization × total time of Table IV ≈ 8400 node-s a job, ~525 s on 16 nodes),
 * and a job stops for launch (5 s) and rescale costs (shrink 2.9 s, expand 7.3 s: the seed's
 * Stencil2D row of Table II). Simulated time runs at the seed's own times (no scaling needed).
 *
 * A second mix, where the seed's effect should appear (malleable against moldable, not only against
 * rigid): one long job (min 2 nodes) alone on the pool, and four shorter jobs whose minimum is half the
 * pool (8 nodes) arriving while it runs. A moldable job keeps the size it was launched at, so the long
 * one holds the whole pool and every arrival waits for it; a malleable one is shrunk to make room.
 * The report's text comparing the policies is written from these numbers (bench/report/malleable.ts).
 *
 *   node --import tsx bench/malleable-scheduling.ts [--json]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { managerPolicy } from '../src/frameworks/malleable/manager/policies.js';
import { simulateWorkload, type SimCosts, type SimJobSpec, type SimResult } from '../src/frameworks/malleable/manager/workload-sim.js';
import { Rng } from '../src/util/rng.js';
import { machineInfo, resultsFile, resultsSvg } from './machine.js';
import { writeSvg } from './plot.js';

const POOL = 16;
const ARRIVALS = [0, 60, 180, 420, 420];
const WORK = 8400;
const COSTS: SimCosts = { launch: 5, shrink: 2.9, expand: 7.3 };
const T_GAPS = [40, 100, 500];
/** Seed Table IV, for comparison. */
const SEED = {
  Malleable40: { totalTime: 2751, meanResponse: 201, meanCompletion: 1767, utilization: 0.97 },
  Malleable100: { totalTime: 2672, meanResponse: 142, meanCompletion: 1699, utilization: 0.98 },
  Malleable500: { totalTime: 2844, meanResponse: 287, meanCompletion: 1454, utilization: 0.97 },
  Moldable: { totalTime: 3792, meanResponse: 289, meanCompletion: 1685, utilization: 0.62 },
  Rigid: { totalTime: 3816, meanResponse: 928, meanCompletion: 1817, utilization: 0.7 },
};

/** The large-minimum mix: [arrival s, min nodes, work node-s] — a long job first, then jobs needing half the pool. */
const LARGE_MIN_MIX: Array<[number, number, number]> = [[0, 2, 16 * 1200], [120, 8, 8 * 300], [240, 8, 8 * 300], [600, 8, 8 * 300], [900, 8, 8 * 300]];

function largeMinWorkload(flexibility: SimJobSpec['flexibility'], sizes: number[]): SimJobSpec[] {
  return LARGE_MIN_MIX.map(([arrival, minNodes, work], i) => ({ id: `job${i + 1}`, arrival, flexibility, nodes: sizes[i]!, minNodes, maxNodes: POOL, work }));
}

function workload(flexibility: SimJobSpec['flexibility'], sizes: number[]): SimJobSpec[] {
  return ARRIVALS.map((arrival, i) => ({ id: `job${i + 1}`, arrival, flexibility, nodes: sizes[i]!, minNodes: 4, maxNodes: 16, work: WORK }));
}

type Row = Pick<SimResult, 'totalTime' | 'meanResponse' | 'meanCompletion' | 'utilization'> & { name: string };

const summary = (name: string, r: Pick<SimResult, 'totalTime' | 'meanResponse' | 'meanCompletion' | 'utilization'>): Row =>
  ({ name, totalTime: r.totalTime, meanResponse: r.meanResponse, meanCompletion: r.meanCompletion, utilization: r.utilization });

export function runScheduling(costs: SimCosts = COSTS, mix: 'seed' | 'large-min' = 'seed'): { rows: Row[]; rigidDraws: number[][]; timelines: Record<string, SimResult['timeline']> } {
  const rows: Row[] = [];
  const timelines: Record<string, SimResult['timeline']> = {};
  const jobs = mix === 'seed' ? workload : largeMinWorkload;
  const mins = mix === 'seed' ? ARRIVALS.map(() => 4) : LARGE_MIN_MIX.map(([, min]) => min);
  for (const tGap of T_GAPS) {
    const r = simulateWorkload(jobs('malleable', mins), POOL, managerPolicy('equipartition', { tGapMs: tGap * 1000 }), costs, tGap);
    rows.push(summary(`Malleable${tGap}`, r));
    timelines[`Malleable${tGap}`] = r.timeline;
  }
  const moldable = simulateWorkload(jobs('moldable', mins), POOL, managerPolicy('moldable'), costs, Infinity);
  rows.push(summary('Moldable', moldable));
  timelines.Moldable = moldable.timeline;
  const rng = new Rng(2014);
  // Rigid sizes: uniform over each job's range, the mean of three draws (as the seed).
  const rigidDraws = [0, 1, 2].map(() => mins.map((min) => rng.int(min, POOL)));
  const rigid = rigidDraws.map((sizes) => simulateWorkload(jobs('rigid', sizes), POOL, managerPolicy('fcfs'), costs));
  const mean = (f: (r: SimResult) => number) => rigid.reduce((a, r) => a + f(r), 0) / rigid.length;
  rows.push(summary('Rigid', { totalTime: mean((r) => r.totalTime), meanResponse: mean((r) => r.meanResponse), meanCompletion: mean((r) => r.meanCompletion), utilization: mean((r) => r.utilization) }));
  timelines.Rigid = rigid[0]!.timeline;
  return { rows, rigidDraws, timelines };
}

/** Nodes held by each job as a step series (for a stacked area chart). */
function steps(timeline: SimResult['timeline']): Array<{ t: number; job: string; nodes: number }> {
  const jobs = [...new Set(timeline.map((p) => p.job))];
  const times = [...new Set(timeline.map((p) => p.t))].sort((a, b) => a - b);
  const held = new Map<string, number>();
  const out: Array<{ t: number; job: string; nodes: number }> = [];
  for (const t of times) {
    for (const job of jobs) out.push({ t, job, nodes: held.get(job) ?? 0 });
    for (const p of timeline.filter((x) => x.t === t)) held.set(p.job, p.nodes);
    for (const job of jobs) out.push({ t, job, nodes: held.get(job) ?? 0 });
  }
  return out;
}

export async function writeSchedulingCharts(timelines: Record<string, SimResult['timeline']>, rows: Row[]): Promise<void> {
  await writeSvg(resultsSvg('malleable-scheduling-nodes'), {
    title: 'Nodes allocated over time (seed Fig. 6): malleable (T_gap 100 s) vs rigid FCFS',
    vconcat: ['Malleable100', 'Rigid'].map((name) => ({
      title: name, width: 560, height: 140,
      data: { values: steps(timelines[name]!) },
      mark: { type: 'area', interpolate: 'linear' },
      encoding: {
        x: { field: 't', type: 'quantitative', title: 'time (s)', scale: { domain: [0, Math.max(...Object.values(timelines).flat().map((p) => p.t))] } },
        y: { field: 'nodes', type: 'quantitative', stack: 'zero', title: 'nodes', scale: { domain: [0, POOL] } },
        color: { field: 'job', type: 'nominal' },
      },
    })),
  });
  // Fig. 7's comparison as bars: each metric normalized by its largest value (utilization inverted), smaller is better.
  const metrics = [['totalTime', 'total time'], ['meanResponse', 'mean response'], ['meanCompletion', 'mean completion'], ['utilization', '1 / utilization']] as const;
  const values = metrics.flatMap(([key, label]) => {
    const raw = rows.map((r) => (key === 'utilization' ? 1 / r.utilization : r[key]));
    const top = Math.max(...raw);
    return rows.map((r, i) => ({ metric: label, policy: r.name, normalized: raw[i]! / top }));
  });
  await writeSvg(resultsSvg('malleable-scheduling-metrics'), {
    title: 'Scheduling comparison (seed Fig. 7 as bars; normalized, smaller is better)',
    data: { values }, width: 520, height: 200, mark: 'bar',
    encoding: {
      x: { field: 'metric', type: 'nominal', title: null },
      xOffset: { field: 'policy' },
      y: { field: 'normalized', type: 'quantitative', title: 'normalized to the worst' },
      color: { field: 'policy', type: 'nominal' },
    },
  });
}

const reductions = (rows: Row[]) => {
  const rigid = rows.find((r) => r.name === 'Rigid')!;
  return Object.fromEntries(rows.filter((r) => r.name.startsWith('Malleable')).map((r) => [r.name, 1 - r.meanResponse / rigid.meanResponse]));
};

/** Stencil2D's shrink 4 → 2 and expand 2 → 4 as bench/malleable-rescale.ts measured them (launch stays the seed-scaled 5 s: not measured there). */
function measuredCosts(): { costs: SimCosts; source: string } | undefined {
  const file = resultsFile('malleable-rescale');
  if (!existsSync(file)) return undefined;
  const r = JSON.parse(readFileSync(file, 'utf8')) as { machine: { date: string; loadAverage?: number }; table2: { stencil2d: { shrink: { total: number }; expand: { total: number } } } };
  const { shrink, expand } = r.table2.stencil2d;
  return { costs: { launch: COSTS.launch, shrink: shrink.total, expand: expand.total }, source: `bench/results/malleable-rescale.json of ${r.machine.date} (load average ${r.machine.loadAverage ?? 'not recorded'})` };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  const { rows, rigidDraws, timelines } = runScheduling();
  const responseReduction = reductions(rows);
  const m = measuredCosts();
  const measured = m ? { ...m, rows: runScheduling(m.costs).rows, responseReduction: {} as Record<string, number> } : undefined;
  if (measured) measured.responseReduction = reductions(measured.rows);
  const large = runScheduling(COSTS, 'large-min');
  const largeMin = { mix: LARGE_MIN_MIX.map(([arrival, minNodes, work]) => ({ arrival, minNodes, maxNodes: POOL, work })), rows: large.rows, rigidDraws: large.rigidDraws };
  const out = { machine: machineInfo(), simulated: true, pool: POOL, arrivals: ARRIVALS, workNodeSeconds: WORK, costs: COSTS, rigidDraws, rows, seed: SEED, responseReduction, measured, largeMin, timelines };
  writeFileSync(resultsFile('malleable-scheduling'), `${JSON.stringify(out, null, 2)}\n`);
  await writeSchedulingCharts(timelines, rows);
  if (values.json) return void process.stdout.write(`${JSON.stringify({ rows, responseReduction })}\n`);
  process.stdout.write('policy          total(s)  response(s)  completion(s)  utilization   seed: total response completion util\n');
  for (const r of rows) {
    const s = SEED[r.name as keyof typeof SEED];
    process.stdout.write(`${r.name.padEnd(14)}  ${r.totalTime.toFixed(0).padStart(8)}  ${r.meanResponse.toFixed(0).padStart(11)}  ${r.meanCompletion.toFixed(0).padStart(13)}  ${(r.utilization * 100).toFixed(0).padStart(10)} %   ${s.totalTime} ${s.meanResponse} ${s.meanCompletion} ${(s.utilization * 100).toFixed(0)} %\n`);
  }
  for (const [name, red] of Object.entries(responseReduction)) process.stdout.write(`${name}: mean response ${(red * 100).toFixed(0)} % below rigid (target ≥ 30 %)\n`);
  process.stdout.write(`\nLarge-minimum mix (${LARGE_MIN_MIX.map(([a, min]) => `${a} s min ${min}`).join(', ')}):\n`);
  for (const r of large.rows) process.stdout.write(`${r.name.padEnd(14)}  ${r.totalTime.toFixed(0).padStart(8)}  ${r.meanResponse.toFixed(0).padStart(11)}  ${r.meanCompletion.toFixed(0).padStart(13)}  ${(r.utilization * 100).toFixed(0).padStart(10)} %\n`);
  if (!measured) return void process.stdout.write('\n(no bench/results/malleable-rescale.json: run bench/malleable-rescale.ts for the rows with measured costs)\n');
  process.stdout.write(`\nThe same with the rescale costs measured here (shrink ${measured.costs.shrink.toFixed(3)} s, expand ${measured.costs.expand.toFixed(3)} s; ${measured.source}):\n`);
  for (const r of measured.rows) process.stdout.write(`${r.name.padEnd(14)}  ${r.totalTime.toFixed(0).padStart(8)}  ${r.meanResponse.toFixed(0).padStart(11)}  ${r.meanCompletion.toFixed(0).padStart(13)}  ${(r.utilization * 100).toFixed(0).padStart(10)} %\n`);
  for (const [name, red] of Object.entries(measured.responseReduction)) process.stdout.write(`${name}: mean response ${(red * 100).toFixed(0)} % below rigid\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
