/**
 * Reruns of a large workflow (issue 28's speed targets), on node processes over loopback with a local
 * ZooKeeper: a synthetic WfFormat file of N no-op tasks (10 levels, each task reading two files of the
 * level above) is replayed once; then
 *   - run again unchanged: how long until "nothing to do" (the complete record, decided from the file's
 *     bytes) — and, for comparison, how long the full plan takes to decide the same (load, stamp,
 *     fingerprint every task, read the journal, plan);
 *   - one workflow input touched: how long from the start of `run` to the first affected task starting
 *     on a member (loading the file, planning, the run directory, the job, every member loading the
 *     file), and the whole rerun.
 *
 * The file is loaded through its compiled copy beside the runs, as `tidepool workflow run` loads it.
 *
 *   npx tsx bench/workflow-rerun.ts [--tasks 1000000] [--nodes 2]
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCompiled } from '../src/frameworks/workflow/compiled-workflow.js';
import { stateDirOf } from '../src/frameworks/workflow/run-directory.js';
import { readProvenance } from '../src/frameworks/workflow/provenance.js';
import { alreadyComplete, nothingToDo, planWorkflowRun, runWorkflow } from '../src/frameworks/workflow/run-workflow.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';
import { startBenchCluster } from './workflow-cluster.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000000' }, nodes: { type: 'string', default: '2' } } });
const TASKS = Number(values.tasks);
const NODES = Number(values.nodes);
if (!Number.isInteger(TASKS) || TASKS < 20) throw new Error(`--tasks ${values.tasks}: a whole number of at least 20`);
const WIDTH = Math.ceil(TASKS / 10);

const seconds = (from: number) => (performance.now() - from) / 1000;
// The file is written, loaded and planned before the cluster starts (as `tidepool workflow run` plans before it
// connects): at a million tasks that takes longer than a ZooKeeper session lives without heartbeats.
const dir = mkdtempSync(join(tmpdir(), 'bench-rerun-'));
const file = join(dir, `rerun-${TASKS}.json`);
writeFileSync(file, syntheticWfFormat({ tasks: TASKS, width: WIDTH, runtime: 0, fileBytes: 1 }));
const shared = join(dir, 'shared');
const opts = { file, shared, replay: 1, nodes: NODES };
// As `tidepool workflow run` loads it: through its compiled copy beside the runs (compiled-workflow.ts) once there is one.
const load = () => loadCompiled(file, stateDirOf(shared));
let t0 = performance.now();
const firstPlan = await planWorkflowRun(await load(), opts);
const bench = await startBenchCluster(NODES);
try {
  const first = await bench.whileNodesLive(runWorkflow(bench.cluster, firstPlan.workflow, { ...opts, prepared: firstPlan }));
  const firstRun = seconds(t0);
  console.log(`first run: ${first.tasks} tasks in ${firstRun.toFixed(1)} s`);

  t0 = performance.now();
  const complete = await alreadyComplete(opts);
  const completeRecord = seconds(t0);
  if (!complete) throw new Error('the unchanged workflow was not found complete');
  t0 = performance.now();
  const unchangedPlan = await planWorkflowRun(await load(), opts);
  const fullPlan = seconds(t0);
  if (!nothingToDo(unchangedPlan)) throw new Error(`the full plan of the unchanged workflow runs ${unchangedPlan.plan.toRun} tasks`);

  // One input touched (its mtime moved): its readers and what is below them run again.
  const touchedAt = new Date(Date.now() + 2_000);
  utimesSync(join(shared, 'in0'), touchedAt, touchedAt);
  const wallStart = Date.now();
  t0 = performance.now();
  const workflow = await load();
  const loaded = seconds(t0);
  const prepared = await planWorkflowRun(workflow, opts);
  const planned = seconds(t0);
  const rerun = await bench.whileNodesLive(runWorkflow(bench.cluster, workflow, { ...opts, prepared }));
  const rerunWall = seconds(t0);
  const starts = readProvenance(rerun.run!).records.map((r) => Date.parse(r.start));
  const firstStart = (Math.min(...starts) - wallStart) / 1000;

  const out = {
    machine: machineInfo(), nodes: NODES, tasks: TASKS, width: WIDTH,
    note: 'node processes on loopback (one worker thread each) with a local ZooKeeper; a synthetic WfFormat file of no-op tasks replayed, collocated intermediate files',
    firstRunSeconds: firstRun,
    unchanged: { completeRecordSeconds: completeRecord, fullPlanSeconds: fullPlan },
    touched: { loadSeconds: loaded, planSeconds: planned - loaded, toRun: prepared.plan.toRun, recreate: prepared.plan.recreate.length, firstStartSeconds: firstStart, wallSeconds: rerunWall, ran: rerun.tasks },
  };
  writeFileSync(resultsFile('workflow-rerun'), `${JSON.stringify(out, null, 1)}\n`);
  printTable([['tasks', 'first run (s)', 'nothing to do (s)', 'full plan, unchanged (s)', 'touched: load (s)', 'then plan (s)', 'first affected task starts (s)', 'rerun (s)', 'tasks run', 'recreated'],
    [TASKS, firstRun.toFixed(1), completeRecord.toFixed(2), fullPlan.toFixed(2), loaded.toFixed(2), (planned - loaded).toFixed(2), firstStart.toFixed(2), rerunWall.toFixed(1), rerun.tasks, prepared.plan.recreate.length]]);
} finally {
  await bench.close();
  rmSync(dir, { recursive: true, force: true });
}
