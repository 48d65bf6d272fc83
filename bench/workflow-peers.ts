/**
 * The same DAG replayed by tidepool, Dask.distributed and Snakemake in one run: the WfInstances
 * Montage 0.1° workflow (103 tasks), each task computing for its recorded runtime × SCALE and writing
 * its outputs at recorded size × SCALE, on 2 cores of this machine (tidepool: 2 node processes with
 * one worker thread each; Dask: a LocalCluster of 2 single-threaded workers; Snakemake: -j 2).
 * Makespans are compared with the DAG's lower bound, max(critical path, total runtime ÷ cores) × SCALE.
 *
 *   npx tsx bench/workflow-peers.ts [--scale 0.02]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';
import { startBenchCluster } from './workflow-cluster.js';

const { values } = parseArgs({ options: { scale: { type: 'string', default: '0.02' } } });
const SCALE = Number(values.scale);
const CORES = 2;
const FILE = '/work/shared/data/workflows/wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-01d-001.json';
const SCRIPT = fileURLToPath(new URL('./peers/workflow_peers.py', import.meta.url));
const wf = await loadWorkflow(FILE);
const bound = Math.max(wf.counts.criticalPath, wf.counts.totalRuntime / CORES) * SCALE;

const rows: { peer: string; seconds: number | null; note?: string }[] = [];
const bench = await startBenchCluster(CORES);
try {
  const m = await bench.measure(wf, { file: FILE, replay: SCALE });
  rows.push({ peer: 'tidepool', seconds: m.span });
  for (const [peer, ensure] of [['dask', 'ensure-dask.sh'], ['snakemake', 'ensure-snakemake.sh']] as const) {
    const ok = spawnSync('bash', [fileURLToPath(new URL(`../scripts/${ensure}`, import.meta.url))], { stdio: 'inherit' }).status === 0;
    if (!ok) {
      rows.push({ peer, seconds: null, note: `${ensure} could not install it` });
      continue;
    }
    const run = spawnSync('/usr/bin/python3', [SCRIPT, peer, FILE, String(SCALE), String(CORES), mkdtempSync(join(bench.tmp, `${peer}-`))], { encoding: 'utf8', timeout: 900_000 });
    if (run.status !== 0) rows.push({ peer, seconds: null, note: run.stderr.trim().split('\n').slice(-3).join(' ') });
    else rows.push({ peer, seconds: (JSON.parse(run.stdout.trim().split('\n').pop()!) as { seconds: number }).seconds });
  }
} finally {
  await bench.close();
}
printTable([['peer', 'makespan s', '× lower bound'], ...rows.map((r) => [r.peer, r.seconds === null ? `– (${r.note})` : r.seconds.toFixed(2), r.seconds === null ? '–' : (r.seconds / bound).toFixed(2)])]);
writeFileSync(resultsFile('workflow-peers'), JSON.stringify({
  machine: machineInfo(), workflow: FILE, tasks: wf.counts.tasks, scale: SCALE, cores: CORES, lowerBoundSeconds: bound, rows,
  note: 'one run each on a 2-core machine shared with other engineers; tidepool span is first task start to last task end (job start-up excluded), Dask from first submit to gather (cluster start excluded), Snakemake the whole snakemake command (DAG building included)',
}, null, 2) + '\n');
