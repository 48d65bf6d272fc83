/**
 * Seed 003 §VI-E (Table IV) scaled down onto node processes: the resource manager (`ResourceManager`,
 * the service `tidepool manager` runs) over four `tidepool node` processes on loopback and a 1-server
 * ZooKeeper, five malleable Stencil2D jobs arriving at the seed's times divided by SCALE, each with
 * the seed's range scaled to the pool (min 1, max 4 nodes; rigid sizes drawn from [1, 4]). The
 * jobs really run (their results are checked against a sequential run); the policies are rigid
 * FCFS, moldable and malleable equipartition with T_gap = 100 s / SCALE. Metrics as Table IV, from
 * the manager's records and the jobs' outcomes.
 *
 * On a 2-core machine four node processes share two cores, so a job does not run twice as fast on
 * twice the nodes (the simulation in malleable-scheduling.ts assumes perfect speedup); the point is
 * the manager carrying out the policies with real rescales, and what that does to waiting.
 *
 * `--mix large-min`: the mix of malleable-scheduling.ts where the seed's effect should appear, scaled the
 * same way — one long Stencil2D (min 1 node) alone on the pool, then four short ones whose minimum is
 * half the pool (2 nodes) arriving while it runs; merged into the results as `largeMin`.
 *
 *   node --import tsx bench/malleable-scheduling-nodes.ts [--json] [--only Rigid|Moldable|Malleable100] [--mix large-min]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { MALLEABLE_APPS } from '../src/frameworks/malleable/applications.js';
import type { GridResult } from '../src/frameworks/malleable/apps/grid-blocks.js';
import { malleableJob } from '../src/frameworks/malleable/malleable-kind-ref.js';
import { loadMalleableApp } from '../src/frameworks/malleable/malleable-app.js';
import type { Flexibility } from '../src/frameworks/malleable/manager/managed-job.js';
import { readManagedJob, submitManagedJob } from '../src/frameworks/malleable/manager/manager-store.js';
import type { PolicyName } from '../src/frameworks/malleable/manager/policies.js';
import { ResourceManager } from '../src/frameworks/malleable/manager/resource-manager.js';
import type { MalleableOutcome } from '../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../src/frameworks/malleable/sequential.js';
import type { Cluster } from '../src/runtime/client/cluster.js';
import { awaitOutcome } from '../src/runtime/job/outcome.js';
import { listNodes } from '../src/runtime/scheduler/index.js';
import { Rng } from '../src/util/rng.js';
import { waitFor } from '../test/support/wait.js';
import { machineInfo, resultsFile } from './machine.js';
import { withNodeProcesses } from './malleable-cluster.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, only: { type: 'string' }, mix: { type: 'string', default: 'seed' } } });
if (values.mix !== 'seed' && values.mix !== 'large-min') throw new Error(`--mix: seed or large-min, got ${values.mix}`);
const POOL = 4;
/** Seed times (s) are divided by this. */
const SCALE = 60;
/** A job of the mix: when it arrives (ms), its fewest nodes and its Stencil2D. */
interface MixJob { at: number; min: number; params: { grid: number; blocks: number; iterations: number } }
const PARAMS = { grid: 512, blocks: 4, iterations: 600 };
const MIXES: Record<string, MixJob[]> = {
  seed: [0, 60, 180, 420, 420].map((s) => ({ at: (s / SCALE) * 1000, min: 1, params: PARAMS })),
  // As malleable-scheduling.ts's large-minimum mix: the long job has four times a short one's work (on 4 nodes, 2).
  'large-min': [[0, 1, 2400], [120, 2, 300], [240, 2, 300], [600, 2, 300], [900, 2, 300]].map(([s, min, iterations]) => ({ at: (s! / SCALE) * 1000, min: min!, params: { ...PARAMS, iterations: iterations! } })),
};
const MIX = MIXES[values.mix]!;
const POLICIES: Array<{ name: string; policy: PolicyName; flexibility: Flexibility; tGapMs: number }> = [
  { name: 'Rigid', policy: 'fcfs', flexibility: 'rigid', tGapMs: 0 },
  { name: 'Moldable', policy: 'moldable', flexibility: 'moldable', tGapMs: 0 },
  { name: `Malleable${100}`, policy: 'equipartition', flexibility: 'malleable', tGapMs: (100 / SCALE) * 1000 },
];

interface JobTimes { id: string; submitted: number; launched: number; finished: number; nodeMs: number; rescales: number; exact: boolean }

async function runPolicy(cluster: Cluster, p: (typeof POLICIES)[number], sizes: number[], expected: (iterations: number) => string): Promise<JobTimes[]> {
  const client = cluster.coordination;
  const manager = new ResourceManager(client, { id: `bench-${p.name}`, policy: p.policy, tGapMs: p.tGapMs });
  await manager.start();
  try {
    const t0 = Date.now();
    const submitted: Array<{ id: string; at: number }> = [];
    for (const [i, { at, min, params }] of MIX.entries()) {
      await sleep(Math.max(0, t0 + at - Date.now())); // the workload's arrival schedule
      const spec = await submitManagedJob(client, {
        ...malleableJob(MALLEABLE_APPS.stencil!, params, { startWaitMs: 60_000 }), secret: cluster.secret!,
        flexibility: p.flexibility, ...(p.flexibility === 'rigid' ? { nodes: sizes[i]! } : { minNodes: min, maxNodes: POOL }),
      });
      submitted.push({ id: spec.id, at: Date.now() });
    }
    const outcomes = await Promise.all(submitted.map((s) => awaitOutcome(client, s.id)));
    await manager.idle();
    return Promise.all(submitted.map(async (s, i) => {
      const o = outcomes[i]!;
      if (o.status !== 'done') throw new Error(`${p.name}: job ${s.id} ended ${o.status}: ${JSON.stringify(o)}`);
      const { result } = (o as { value: MalleableOutcome<GridResult> }).value;
      const events = (await readManagedJob(client, s.id))!.record.events;
      const launch = events.find((e) => e.type === 'launch');
      if (!launch) throw new Error(`${p.name}: job ${s.id} has no launch event`);
      // Nodes held over time, from the manager's events (each says the job's node count after it) to the finish.
      // An expand is recorded twice: when the nodes are handed over and, with the job's T_rescale, when it acknowledges.
      let nodeMs = 0;
      for (const [k, e] of events.entries()) nodeMs += e.nodes * (Math.min(events[k + 1]?.at ?? o.finishedAt, o.finishedAt) - e.at);
      return { id: s.id, submitted: s.at, launched: launch.at, finished: o.finishedAt, nodeMs, rescales: events.filter((e) => e.type === 'shrink' || (e.type === 'expand' && e.tRescaleMs !== undefined)).length, exact: result.checksum === expected(MIX[i]!.params.iterations) };
    }));
  } finally {
    await manager.stop();
  }
}

function metrics(name: string, jobs: JobTimes[]) {
  const first = Math.min(...jobs.map((j) => j.submitted));
  const total = (Math.max(...jobs.map((j) => j.finished)) - first) / 1000;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    name, totalTime: total,
    meanResponse: mean(jobs.map((j) => (j.launched - j.submitted) / 1000)),
    meanCompletion: mean(jobs.map((j) => (j.finished - j.submitted) / 1000)),
    utilization: jobs.reduce((a, j) => a + j.nodeMs, 0) / 1000 / (POOL * total),
    rescales: jobs.reduce((a, j) => a + j.rescales, 0),
    exact: jobs.every((j) => j.exact),
  };
}

async function main(): Promise<void> {
  const app = await loadMalleableApp(MALLEABLE_APPS.stencil!);
  const checksums = new Map([...new Set(MIX.map((j) => j.params.iterations))].map((n) => [n, runSequential<GridResult>(app, { ...PARAMS, iterations: n }).checksum]));
  const expected = (iterations: number) => checksums.get(iterations)!;
  const rng = new Rng(2014);
  const sizes = MIX.map((j) => rng.int(j.min, POOL)); // one draw from each job's range (the seed took the mean of three)
  const rows: Array<ReturnType<typeof metrics>> = [];
  const jobs: Record<string, JobTimes[]> = {};
  await withNodeProcesses(POOL, async (cluster) => {
    await waitFor(async () => (await listNodes(cluster.coordination)).length === POOL, 'the nodes', 60_000);
    for (const p of POLICIES.filter((x) => !values.only || x.name === values.only)) {
      await waitFor(async () => (await listNodes(cluster.coordination)).every((n) => n.job === null && n.assignment === ''), 'an idle pool', 120_000);
      process.stderr.write(`${p.name}…\n`);
      jobs[p.name] = await runPolicy(cluster, p, sizes, expected);
      rows.push(metrics(p.name, jobs[p.name]!));
    }
  });
  const rigid = rows.find((r) => r.name === 'Rigid');
  const responseReduction = rigid ? Object.fromEntries(rows.filter((r) => r.name !== 'Rigid').map((r) => [r.name, 1 - r.meanResponse / rigid.meanResponse])) : {};
  const file = resultsFile('malleable-scheduling-nodes');
  if (values.mix === 'large-min') {
    // Merged into the results of the seed's mix (if any), as the report reads them.
    const largeMin = { machine: machineInfo(), mix: MIX, rigidSizes: sizes, rows, jobs };
    const results = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : { machine: machineInfo() };
    writeFileSync(file, `${JSON.stringify({ ...results, largeMin }, null, 2)}\n`);
  } else {
    const out = {
      machine: machineInfo(),
      note: `${POOL} node processes on loopback over a 1-server ZooKeeper with the resource manager, on a 2-core machine (its load average at the start is in machine.loadAverage); the seed's arrival times and T_gap divided by ${SCALE}; Stencil2D ${PARAMS.grid}², ${PARAMS.iterations} iterations a job`,
      pool: POOL, scale: SCALE, arrivalsMs: MIX.map((j) => j.at), params: PARAMS, rigidSizes: sizes, rows, responseReduction, jobs,
    };
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  }
  if (values.json) return void console.log(JSON.stringify({ rows, responseReduction }));
  printTable([['policy', 'total (s)', 'mean response (s)', 'mean completion (s)', 'utilization', 'rescales', 'exact'],
    ...rows.map((r) => [r.name, r.totalTime, r.meanResponse, r.meanCompletion, `${(r.utilization * 100).toFixed(0)} %`, r.rescales, String(r.exact)])]);
  for (const [name, red] of Object.entries(responseReduction)) console.log(`${name}: mean response ${(red * 100).toFixed(0)} % below rigid`);
}

await main();
