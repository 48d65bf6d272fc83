/**
 * The same DAGs run by tidepool, Dask.distributed and Snakemake in one run, on 2 cores of this machine
 * (tidepool: 2 node processes with one worker thread each; Dask: a LocalCluster of 2 single-threaded
 * workers; Snakemake: --cores 2, greedy scheduler):
 *   - the dispatch bag of bench/workflow.ts (independent no-op tasks; --bag tasks),
 *   - the Montage replay of Tables 1–2 (montage-chameleon-2mass-05d-001, 1,738 tasks), each task
 *     computing for its recorded runtime × SCALE and writing its outputs at recorded size × SCALE.
 * Every peer reports the span from its first task's start to its last task's end (what bench/workflow.ts
 * measures) and the wall time of the run (tidepool: submit to result; Dask: submit to gather;
 * Snakemake: the whole command, DAG building included). Spans are compared with the DAG's lower
 * bound, max(critical path, total runtime ÷ cores) × SCALE.
 *
 * Both peers are installed from Debian's packages (python3-distributed, snakemake) by scripts/ensure-dask.sh
 * and scripts/ensure-snakemake.sh first; if one cannot be installed, or a peer fails or times out on a DAG,
 * the bench fails naming it and writes no results.
 *
 *   npx tsx bench/workflow-peers.ts --data DIR [--scale 0.002] [--bag 1000] [--peer-timeout 1800]
 * (DIR: the curated data set's root, holding workflows/wfformat-v1.5/…; see bench/curated-data.ts)
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { curatedPath, DATA_OPTION, MONTAGE_05D } from './curated-data.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { printTable } from './table.js';
import { startBenchCluster } from './workflow-cluster.js';

const { values } = parseArgs({ options: { scale: { type: 'string', default: '0.002' }, bag: { type: 'string', default: '1000' }, 'peer-timeout': { type: 'string', default: '1800' }, ...DATA_OPTION } });
/** Seconds a peer may take on one DAG before it is stopped (and said to have not finished). */
const PEER_TIMEOUT = Number(values['peer-timeout']);
const SCALE = Number(values.scale);
const BAG = Number(values.bag);
const CORES = 2;
const MONTAGE = curatedPath(values.data, MONTAGE_05D, 'bench/workflow-peers');
// From the project's root: built (dist/bench) or from the sources alike.
const SCRIPT = join(projectRoot(), 'bench', 'peers', 'workflow_peers.py');

function python(args: string[]): Promise<{ status: number; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/python3', args, { encoding: 'utf8', timeout: PEER_TIMEOUT * 1000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; killed?: boolean }) | null;
      resolve({ status: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr: stderr || (e ? e.message : ''), timedOut: e?.killed === true });
    });
  });
}

interface Row { dag: string; peer: string; seconds: number | null; wall: number | null; note?: string }
const rows: Row[] = [];
// The peers are installed before the cluster starts: an install blocks this process for minutes, and
// the cluster's ZooKeeper session would expire meanwhile.
const peers: [string, string][] = [['dask', 'ensure-dask.sh'], ['snakemake', 'ensure-snakemake.sh']];
// A peer that cannot be installed stops the bench here (no table of dashes): the comparison needs both.
for (const [peer, ensure] of peers) {
  const status = spawnSync('bash', [join(projectRoot(), 'scripts', ensure)], { stdio: 'inherit' }).status;
  if (status !== 0) throw new Error(`bench/workflow-peers: scripts/${ensure} could not install ${peer} (exit ${status}); the peers are compared in one run or not at all`);
}
const bench = await startBenchCluster(CORES);
const bagFile = join(bench.tmp, `bag-${BAG}.json`);
writeFileSync(bagFile, syntheticWfFormat({ tasks: BAG, runtime: 0, files: false }));
const dags = [
  { dag: `bag of ${BAG} no-op tasks`, file: bagFile, scale: 1 },
  { dag: `Montage 0.5° (Tables 1–2), runtimes × ${SCALE}`, file: MONTAGE, scale: SCALE },
];
const bounds: Record<string, number> = {};
try {
  for (const { dag, file, scale } of dags) {
    const wf = await loadWorkflow(file);
    bounds[dag] = Math.max(wf.counts.criticalPath, wf.counts.totalRuntime / CORES) * scale;
    const m = await bench.measure(wf, { file, replay: scale });
    rows.push({ dag, peer: 'tidepool', seconds: m.span, wall: m.wall });
    for (const [peer] of peers) {
      // Asynchronously: a blocked event loop would let the cluster's ZooKeeper session expire during a long peer run.
      const run = await python([SCRIPT, peer, file, String(scale), String(CORES), mkdtempSync(join(bench.tmp, `${peer}-`))]);
      if (run.timedOut) rows.push({ dag, peer, seconds: null, wall: null, note: `not finished within ${PEER_TIMEOUT} s` });
      else if (run.status !== 0) rows.push({ dag, peer, seconds: null, wall: null, note: run.stderr.trim().split('\n').slice(-3).join(' ') });
      else {
        const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as { seconds: number; wall: number };
        rows.push({ dag, peer, seconds: r.seconds, wall: r.wall });
      }
    }
  }
} finally {
  await bench.close();
}
const bagRate = (r: Row) => (r.dag.startsWith('bag') && r.seconds ? `${Math.round(BAG / r.seconds)} tasks/s` : '');
const failed = rows.filter((r) => r.seconds === null);
if (failed.length > 0) {
  // Loudly, and without results: a figure missing from the comparison is not written as a dash.
  for (const r of failed) console.error(`bench/workflow-peers: ${r.peer} on ${r.dag}: ${r.note}`);
  process.exit(1);
}
printTable([['DAG', 'peer', 'span s', 'wall s', '× lower bound', ''], ...rows.map((r) => [r.dag, r.peer, r.seconds === null ? `– (${r.note})` : r.seconds.toFixed(2), r.wall === null ? '–' : r.wall.toFixed(2), r.seconds === null || bounds[r.dag]! === 0 ? '–' : (r.seconds / bounds[r.dag]!).toFixed(2), bagRate(r)])]);
writeFileSync(resultsFile('workflow-peers'), JSON.stringify({
  machine: machineInfo(), cores: CORES, scale: SCALE, bag: BAG, montage: MONTAGE_05D, lowerBounds: bounds, rows,
  note: 'one run each on a 2-core machine shared with other engineers; span: first task start to last task end on every peer (job submission, cluster start and Snakemake\'s DAG building excluded; they are in the wall time)',
}, null, 2) + '\n');
