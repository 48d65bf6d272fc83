/**
 * Seed 003 §VI-A–D on this machine: malleable Stencil2D, Wave2D, LeanMD and Lulesh (the proxies in
 * src/frameworks/malleable/apps) as jobs on four `tidepool node` processes on loopback over a 1-server
 * ZooKeeper (scaled sizes: the seed ran 256 cores on Stampede).
 * - Table II: shrink 4 → 2 and expand 2 → 4, time per phase (LB, checkpoint, reconnect, restore, total).
 * - Fig. 4: time per iteration across a shrink and an expand (Stencil2D).
 * - Fig. 5a: shrink 4 → 2 time per phase against the problem size (Stencil2D grid side).
 * - Table III: the lines each application changes to be malleable: a line diff against a plain
 *   sequential program over the same decomposition and kernels (bench/apps/plain/), which this bench
 *   also runs (its result must equal the malleable job's, bit for bit; its time is reported).
 * - Per core (issue #29): Stencil2D 1024² on one node process of two worker threads, its objects on
 *   one object thread and on two (`runtime.workers`), alternately: the speed-up of the median iteration.
 * - Fig. 5b (strong scaling, `--fig5b`): Stencil2D of one size on 1, 2 and 4 node processes: the
 *   median iteration and the speed-up against one process (two cores run two processes at once).
 * Every run's result is checked bit for bit against a sequential run of the same application.
 *
 *   node --import tsx bench/malleable-rescale.ts [--quick] [--json]
 *   node --import tsx bench/malleable-rescale.ts --per-core [--quick]   (only the per-core rows, merged into the results)
 *   node --import tsx bench/malleable-rescale.ts --fig5b [--quick]      (only Fig. 5b, merged into the results)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MALLEABLE_APPS } from '../src/frameworks/malleable/applications.js';
import type { GridParams } from '../src/frameworks/malleable/apps/grid-blocks.js';
import type { HydroParams } from '../src/frameworks/malleable/apps/hydro-blocks.js';
import type { MdParams } from '../src/frameworks/malleable/apps/md-cells.js';
import { loadMalleableApp } from '../src/frameworks/malleable/malleable-app.js';
import type { MalleableRuntimeOptions, MalleableStats, RescaleAck } from '../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../src/frameworks/malleable/sequential.js';
import { submitMalleable } from '../src/frameworks/malleable/submit.js';
import type { Cluster } from '../src/runtime/client/cluster.js';
import { leanmd } from './apps/plain/leanmd.js';
import { lulesh } from './apps/plain/lulesh.js';
import { stencil2d } from './apps/plain/stencil2d.js';
import { wave2d } from './apps/plain/wave2d.js';
import { lineDiff, sourceLines } from './line-diff.js';
import { machineInfo, projectRoot, resultsFile, resultsSvg } from './machine.js';
import { withNodeProcesses } from './malleable-cluster.js';
import { writeSvg } from './plot.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, 'per-core': { type: 'boolean', default: false }, fig5b: { type: 'boolean', default: false } } });
const NODES = 4;
const TABLE2 = { grid: values.quick ? 512 : 1024, blocks: 8, iterations: 40, shrinkAt: 15, expandAt: 30 };
/** Table II's jobs: each application's parameters and the iterations at which it shrinks and expands. */
const TABLE2_JOBS: Array<{ app: string; key: string; params: GridParams | MdParams | HydroParams; shrinkAt: number; expandAt: number; size: string }> = [
  { app: 'stencil', key: 'stencil2d', params: { grid: TABLE2.grid, blocks: TABLE2.blocks, iterations: TABLE2.iterations }, shrinkAt: TABLE2.shrinkAt, expandAt: TABLE2.expandAt, size: `grid ${TABLE2.grid}², ${TABLE2.blocks}² objects` },
  { app: 'wave', key: 'wave2d', params: { grid: TABLE2.grid, blocks: TABLE2.blocks, iterations: TABLE2.iterations }, shrinkAt: TABLE2.shrinkAt, expandAt: TABLE2.expandAt, size: `grid ${TABLE2.grid}², ${TABLE2.blocks}² objects` },
  // One MD step is three iterations: rescales at the start of steps 5 and 10 (of 15; quick: 3 and 6 of 9).
  { app: 'leanmd', key: 'leanmd', params: { cells: [4, 4, 4], atomsPerSide: 3, steps: values.quick ? 9 : 15 }, shrinkAt: values.quick ? 9 : 15, expandAt: values.quick ? 18 : 30, size: '4³ cells of 27 atoms, 896 cell pairs (960 objects)' },
  // One hydro step is two iterations.
  { app: 'lulesh', key: 'lulesh', params: { elements: values.quick ? 65_536 : 262_144, blocks: 64, steps: 20 }, shrinkAt: 14, expandAt: 28, size: `${values.quick ? 65_536 : 262_144} elements in 64 blocks` },
];
/** On 2 cores, 2 node processes is what can run in parallel: Fig. 4 shrinks 2 → 1 and expands 1 → 2. */
const FIG4 = { grid: values.quick ? 512 : 1536, blocks: 8, iterations: 90, shrinkAt: 30, expandAt: 60, nodes: 2 };
const FIG5_GRIDS = values.quick ? [256, 512] : [256, 512, 1024, 2048];
/** Per core: Stencil2D on one node process of two worker threads, on 1 object thread and on 2, `rounds` times each (alternating). */
const PER_CORE = { grid: 1024, blocks: 8, iterations: values.quick ? 40 : 200, syncEvery: 10, rounds: values.quick ? 1 : 3 };
/**
 * Fig. 5b, strong scaling on node processes: Stencil2D of one size on 1, 2 and 4 `tidepool node` processes
 * (one worker thread each), `rounds` times each in turn. A 2-core machine runs two processes at once:
 * beyond two they share the cores, which the report says next to the numbers.
 */
const FIG5B = { grid: values.quick ? 512 : 1024, blocks: 8, iterations: values.quick ? 40 : 200, syncEvery: 10, nodes: [1, 2, 4], rounds: values.quick ? 1 : 3 };
/** Each application: its name in the tables, its malleable source and kernels, and the plain program over the same decomposition. */
const APPS: Record<string, { name: string; file: string; kernels: string[]; plain: (params: never) => unknown; plainFile: string }> = {
  stencil: { name: 'Stencil2D', file: 'stencil2d.ts', kernels: ['grid-blocks.ts'], plain: stencil2d, plainFile: 'stencil2d.ts' },
  wave: { name: 'Wave2D', file: 'wave2d.ts', kernels: ['grid-blocks.ts'], plain: wave2d, plainFile: 'wave2d.ts' },
  leanmd: { name: 'LeanMD', file: 'leanmd.ts', kernels: ['md-cells.ts'], plain: leanmd, plainFile: 'leanmd.ts' },
  lulesh: { name: 'Lulesh', file: 'lulesh.ts', kernels: ['hydro-blocks.ts'], plain: lulesh, plainFile: 'lulesh.ts' },
};
/** Seed Table III (SLOC of the original application, and modified to be malleable). */
const SEED_TABLE3: Record<string, { original: number; modified: number }> = { stencil: { original: 207, modified: 31 }, leanmd: { original: 703, modified: 37 }, lulesh: { original: 4066, modified: 15 }, wave: { original: 363, modified: 37 } };
/** Seed Table II, Stencil2D and Wave2D rows (s), for comparison. */
const SEED = {
  leanmd: { shrink: { lb: 0.515, checkpoint: 0.039, reconnect: 2.102, restore: 0.003, total: 2.658 }, expand: { lb: 0.056, checkpoint: 0.016, reconnect: 7.079, restore: 0.003, total: 7.154 } },
  lulesh: { shrink: { lb: 0.56, checkpoint: 0.531, reconnect: 2.533, restore: 0.432, total: 4.056 }, expand: { lb: 0.458, checkpoint: 0.52, reconnect: 7.083, restore: 0.436, total: 8.496 } },
  stencil2d: { shrink: { lb: 0.299, checkpoint: 0.05, reconnect: 2.501, restore: 0.054, total: 2.904 }, expand: { lb: 0.133, checkpoint: 0.036, reconnect: 7.076, restore: 0.038, total: 7.283 } },
  wave2d: { shrink: { lb: 1.219, checkpoint: 0.243, reconnect: 2.542, restore: 0.336, total: 4.34 }, expand: { lb: 1.046, checkpoint: 0.244, reconnect: 7.067, restore: 0.337, total: 8.695 } },
};

interface Run { params: unknown; result: unknown; stats: MalleableStats; exact: boolean; seconds: number }

async function runJob(cluster: Cluster, app: string, params: unknown, rescaleAt: Array<{ iteration: number; nodes: number }>, nodes = NODES, runtime: MalleableRuntimeOptions = {}): Promise<Run> {
  const started = Date.now();
  const job = await submitMalleable(cluster, MALLEABLE_APPS[app]!, params, { nodes, maxNodes: NODES, runtime: { rescaleAt, startWaitMs: 30_000, ...runtime } });
  const { result, stats } = await job.result();
  const seconds = (Date.now() - started) / 1000;
  // The whole result (checksums over every value, and the reductions' history) bit for bit: JSON keeps a double's every bit.
  const exact = JSON.stringify(runSequential(await loadMalleableApp(MALLEABLE_APPS[app]!), params)) === JSON.stringify(result);
  if (!exact) console.error(`${app} ${JSON.stringify(params)}: result DIFFERS from the sequential run`);
  return { params, result, stats, exact, seconds };
}

const phasesOf = (r: RescaleAck) => ({ lb: r.phases.lb / 1000, checkpoint: r.phases.checkpoint / 1000, reconnect: r.phases.reconnect / 1000, restore: r.phases.restore / 1000, total: r.tRescaleMs / 1000 });

const sloc = (file: string) => sourceLines(readFileSync(file, 'utf8'));

/** Table III's row of an application: its lines, the plain program's, and what the malleable version changes (a line diff). */
function programmerEffort(app: string) {
  const { name, file, kernels, plainFile } = APPS[app]!;
  const root = projectRoot();
  const malleable = sloc(`${root}/src/frameworks/malleable/apps/${file}`);
  const plain = sloc(`${root}/bench/apps/plain/${plainFile}`);
  const { added, removed } = lineDiff(plain, malleable);
  return {
    app: name, plainSloc: plain.length, malleableSloc: malleable.length, kernelSloc: kernels.reduce((n, k) => n + sloc(`${root}/src/frameworks/malleable/apps/${k}`).length, 0),
    changed: added.length, removed: removed.length, changedLines: added, seed: SEED_TABLE3[app],
  };
}

/** The plain program on the same parameters, here in this process: its time, and whether its result is the malleable job's, bit for bit. */
function runPlain(app: string, params: unknown, result: unknown): { seconds: number; exact: boolean } {
  const started = performance.now();
  const plain = APPS[app]!.plain(params as never);
  const seconds = (performance.now() - started) / 1000;
  const exact = JSON.stringify(plain) === JSON.stringify(result);
  if (!exact) console.error(`${app}: the plain program's result DIFFERS from the malleable job's`);
  return { seconds, exact };
}

/**
 * The per-core speed-up: Stencil2D on one node process of two worker threads, its objects on one object
 * thread and on both (alternating runs, so that a change in the machine's load hits both alike). The
 * speed-up is of the median iteration time (each iteration's wall time on the node, waiting for the
 * other thread's halos included; the leader's round trip, every `syncEvery` iterations, is not).
 */
async function perCore() {
  return withNodeProcesses(1, async (cluster) => {
    const params = { grid: PER_CORE.grid, blocks: PER_CORE.blocks, iterations: PER_CORE.iterations };
    const runs: Array<{ threads: number; medianMs: number; seconds: number; exact: boolean }> = [];
    for (let round = 0; round < PER_CORE.rounds; round++) {
      for (const threads of [1, 2]) {
        const run = await runJob(cluster, 'stencil', params, [], 1, { workers: threads, syncEvery: PER_CORE.syncEvery });
        // The first iterations pay for compilation and the first allocations.
        runs.push({ threads, medianMs: median(run.stats.iterationMs.slice(5).map((ms) => ({ ms }))), seconds: run.seconds, exact: run.exact });
      }
    }
    const best = (threads: number) => Math.min(...runs.filter((r) => r.threads === threads).map((r) => r.medianMs));
    return { machine: machineInfo(), setup: PER_CORE, runs, medianMs: { one: best(1), two: best(2) }, speedup: Number((best(1) / best(2)).toFixed(2)), exact: runs.every((r) => r.exact) };
  }, 2);
}

/** Fig. 5b: the median iteration of the same Stencil2D on 1, 2 and 4 node processes (best of the rounds), and the speed-up against one. */
async function strongScaling() {
  return withNodeProcesses(Math.max(...FIG5B.nodes), async (cluster) => {
    const params = { grid: FIG5B.grid, blocks: FIG5B.blocks, iterations: FIG5B.iterations };
    const runs: Array<{ nodes: number; medianMs: number; seconds: number; exact: boolean }> = [];
    for (let round = 0; round < FIG5B.rounds; round++) {
      for (const nodes of FIG5B.nodes) {
        const run = await runJob(cluster, 'stencil', params, [], nodes, { syncEvery: FIG5B.syncEvery });
        runs.push({ nodes, medianMs: median(run.stats.iterationMs.slice(5).map((ms) => ({ ms }))), seconds: run.seconds, exact: run.exact });
      }
    }
    const best = (nodes: number) => Math.min(...runs.filter((r) => r.nodes === nodes).map((r) => r.medianMs));
    const points = FIG5B.nodes.map((nodes) => ({ nodes, medianMs: best(nodes), speedup: Number((best(1) / best(nodes)).toFixed(2)) }));
    return { machine: machineInfo(), setup: FIG5B, runs, points, exact: runs.every((r) => r.exact) };
  });
}

function printPerCore(p: Awaited<ReturnType<typeof perCore>>): void {
  console.log(`\nPer core: Stencil2D ${p.setup.grid}² (${p.setup.blocks}² objects, ${p.setup.iterations} iterations, sync every ${p.setup.syncEvery}) on 1 node process × 2 worker threads`);
  printTable([['object threads', 'median iteration (ms)', 'job (s)', 'exact'], ...p.runs.map((r) => [r.threads, r.medianMs, r.seconds, String(r.exact)])]);
  console.log(`speed-up 1 → 2 threads (best median iteration each): ${p.speedup}× (target ≥ 1.7×)`);
}

async function main(): Promise<void> {
  if (values.fig5b) {
    // Only Fig. 5b, merged into the results of the last full run (if any).
    const fig5b = await strongScaling();
    const file = resultsFile('malleable-rescale');
    const results = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : { machine: machineInfo() };
    writeFileSync(file, `${JSON.stringify({ ...results, fig5b }, null, 2)}\n`);
    if (values.json) return void console.log(JSON.stringify(fig5b));
    console.log(`Fig. 5b: Stencil2D ${fig5b.setup.grid}² (${fig5b.setup.blocks}² objects, ${fig5b.setup.iterations} iterations) on node processes of one worker thread, ${fig5b.machine.usableCores} usable core(s)`);
    return printTable([['node processes', 'median iteration (ms)', 'speed-up'], ...fig5b.points.map((p) => [p.nodes, p.medianMs, p.speedup])]);
  }
  if (values['per-core']) {
    // Only the per-core rows, merged into the results of the last full run (if any).
    const per = await perCore();
    const file = resultsFile('malleable-rescale');
    const results = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : { machine: machineInfo() };
    writeFileSync(file, `${JSON.stringify({ ...results, perCore: per }, null, 2)}\n`);
    return values.json ? void console.log(JSON.stringify(per)) : printPerCore(per);
  }
  await withNodeProcesses(NODES, async (cluster) => {
    const table2: Record<string, { shrink: ReturnType<typeof phasesOf>; expand: ReturnType<typeof phasesOf>; exact: boolean; grid?: number; size: string; seconds: number; plain: { seconds: number; exact: boolean } }> = {};
    for (const { app, key, params, shrinkAt, expandAt, size } of TABLE2_JOBS) {
      const run = await runJob(cluster, app, params, [{ iteration: shrinkAt, nodes: 2 }, { iteration: expandAt, nodes: 4 }]);
      const [shrink, expand] = run.stats.rescales;
      if (!shrink || !expand) throw new Error(`${app}: expected a shrink and an expand, the job reported ${JSON.stringify(run.stats.rescales)} (${run.stats.rollbacks} rollbacks)`);
      const plain = runPlain(app, params, run.result);
      table2[key] = { shrink: phasesOf(shrink!), expand: phasesOf(expand!), exact: run.exact && plain.exact, ...('grid' in params ? { grid: params.grid } : {}), size, seconds: run.seconds, plain };
    }
    const fig4Run = await runJob(cluster, 'stencil', { grid: FIG4.grid, blocks: FIG4.blocks, iterations: FIG4.iterations }, [{ iteration: FIG4.shrinkAt, nodes: FIG4.nodes / 2 }, { iteration: FIG4.expandAt, nodes: FIG4.nodes }], FIG4.nodes);
    const fig4 = fig4Run.stats.iterationMs.map((ms, i) => ({ iteration: i, ms, nodes: fig4Run.stats.nodesPerIteration[i]! }));
    const fig4Phases = { before: median(fig4.slice(5, FIG4.shrinkAt)), shrunk: median(fig4.slice(FIG4.shrinkAt + 1, FIG4.expandAt)), expanded: median(fig4.slice(FIG4.expandAt + 1)) };
    const fig5 = [];
    for (const grid of FIG5_GRIDS) {
      const run = await runJob(cluster, 'stencil', { grid, blocks: 8, iterations: 12 }, [{ iteration: 6, nodes: 2 }]);
      fig5.push({ grid, stateMiB: (grid * grid * 8) / 2 ** 20, ...phasesOf(run.stats.rescales[0]!), exact: run.exact });
    }
    // The sources' lines (read from the project root, whether this runs from the sources or built).
    const table3 = Object.keys(APPS).map(programmerEffort);
    return { table2, fig4, fig4Phases, fig4Run, fig5, table3 };
  }).then(async ({ table2, fig4, fig4Phases, fig4Run, fig5, table3 }) => {
    const per = await perCore();
    const results = {
      machine: machineInfo(),
      note: 'node processes on loopback over a 1-server ZooKeeper, on a 2-core machine; scaled sizes (the seed: 256 cores on Stampede)',
      setup: { nodes: NODES, table2: TABLE2, fig4: FIG4, fig5Grids: FIG5_GRIDS },
      table2, seedTable2: SEED, fig4, fig4MedianMs: fig4Phases, fig4Rescales: fig4Run.stats.rescales, fig5, table3, perCore: per,
      allExact: Object.values(table2).every((r) => r.exact) && fig4Run.exact && fig5.every((r) => r.exact) && per.exact,
    };
    writeFileSync(resultsFile('malleable-rescale'), `${JSON.stringify(results, null, 2)}\n`);
    await writeSvg(resultsSvg('malleable-fig4'), {
      title: `Stencil2D ${FIG4.grid}²: time per iteration across a shrink 2→1 (iteration ${FIG4.shrinkAt}) and an expand 1→2 (${FIG4.expandAt})`, width: 520, height: 240, data: { values: fig4 },
      mark: { type: 'line', point: true }, encoding: { x: { field: 'iteration', type: 'quantitative' }, y: { field: 'ms', type: 'quantitative', title: 'iteration time (ms)' } },
    });
    await writeSvg(resultsSvg('malleable-fig5a'), {
      title: 'Stencil2D shrink 4→2: time per phase against grid side', width: 420, height: 240,
      data: { values: fig5.flatMap((r) => (['lb', 'checkpoint', 'reconnect', 'restore'] as const).map((phase) => ({ grid: String(r.grid), phase, seconds: r[phase] }))) },
      mark: 'bar', encoding: { x: { field: 'grid', type: 'ordinal', sort: null }, y: { field: 'seconds', type: 'quantitative', stack: 'zero' }, color: { field: 'phase', type: 'nominal' } },
    });
    if (values.json) return void console.log(JSON.stringify(results));
    console.log(`Table II (s), ${NODES} node processes; ${TABLE2_JOBS.map((j) => `${j.key}: ${j.size}`).join('; ')}`);
    const rows: Array<Array<string | number>> = [['app', 'rescale', 'LB', 'checkpoint', 'reconnect', 'restore', 'total', 'seed total', 'exact']];
    for (const [app, r] of Object.entries(table2)) {
      for (const k of ['shrink', 'expand'] as const) rows.push([app, k === 'shrink' ? 'shrink 4→2' : 'expand 2→4', r[k].lb, r[k].checkpoint, r[k].reconnect, r[k].restore, r[k].total, SEED[app as keyof typeof SEED][k].total, String(r.exact)]);
    }
    printTable(rows);
    console.log(`\nFig. 4: median iteration time (ms) — 2 nodes ${fig4Phases.before}, 1 node ${fig4Phases.shrunk}, 2 nodes again ${fig4Phases.expanded}`);
    console.log('\nFig. 5a: shrink 4→2 (s) against the grid side');
    printTable([['grid', 'state MiB', 'LB', 'checkpoint', 'reconnect', 'restore', 'total', 'exact'], ...fig5.map((r) => [r.grid, r.stateMiB, r.lb, r.checkpoint, r.reconnect, r.restore, r.total, String(r.exact)])]);
    console.log('\nTable III: SLOC of the plain program and of the malleable application (kernels shared by both apart), and the lines the malleable one adds or changes (line diff); the seed\'s original and modified SLOC');
    printTable([['app', 'plain SLOC', 'malleable SLOC', 'shared kernels', 'changed', 'removed', 'seed original', 'seed modified'], ...table3.map((r) => [r.app, r.plainSloc, r.malleableSloc, r.kernelSloc, r.changed, r.removed, r.seed?.original ?? '–', r.seed?.modified ?? '–'])]);
    printPerCore(per);
    console.log(`\nThe plain programs (one process, one core) against the malleable jobs of Table II (4 → 2 → 4 node processes): ${Object.entries(table2).map(([k, r]) => `${k} ${r.plain.seconds.toFixed(2)} s plain, ${r.seconds.toFixed(2)} s malleable${r.plain.exact ? '' : ' (RESULT DIFFERS)'}`).join('; ')}`);
  });
}

const median = (xs: Array<{ ms: number }>) => Number(([...xs].sort((a, b) => a.ms - b.ms)[Math.floor(xs.length / 2)]?.ms ?? NaN).toFixed(2));

await main();
