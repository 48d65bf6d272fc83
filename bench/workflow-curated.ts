/**
 * Every workflow of the curated data set (41 files: Pegasus DAX 2.1, WfFormat 1.5 and WfCommons JSON
 * 1.4, up to 3.5 MB each) loaded as `tidepool workflow` loads it, each checked against the figures its
 * curators computed independently (`workflows/SUMMARY.computed.json`: tasks, explicit edges, distinct
 * files, total runtime, critical path, depth) and timed. The test suite checks the same on the subset
 * in test/data/workflows (test/frameworks/workflow/load-real-workflows.test.ts); this is the whole set.
 * Exits 1 naming each file and figure that disagrees. A check more than a measurement: it prints the
 * load times but writes no results file.
 *
 *   npx tsx bench/workflow-curated.ts --data DIR
 * (DIR: the curated data set's root, holding workflows/SUMMARY.computed.json; see bench/curated-data.ts)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { curatedPath, DATA_OPTION } from './curated-data.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { ...DATA_OPTION } });
const SUMMARY = curatedPath(values.data, 'workflows/SUMMARY.computed.json', 'bench/workflow-curated');
interface Expected { tasks: number; edges: number; files?: number; critical_path_s: number; total_runtime_s: number; depth: number }
const summary = JSON.parse(readFileSync(SUMMARY, 'utf8')) as Record<string, Expected>;
/** Every file the summary names, each checked before anything is loaded. */
const files = new Map(Object.keys(summary).map((file) => [file, curatedPath(values.data, `workflows/${file}`, 'bench/workflow-curated')]));

const rows: { file: string; tasks: number; loadSeconds: number; disagreements: string[] }[] = [];
for (const [file, want] of Object.entries(summary)) {
  const t0 = performance.now();
  const wf = await loadWorkflow(files.get(file)!);
  const loadSeconds = (performance.now() - t0) / 1000;
  const c = wf.counts;
  const disagreements = [
    c.tasks !== want.tasks && `tasks ${c.tasks} (curators: ${want.tasks})`,
    c.explicitEdges !== want.edges && `explicit edges ${c.explicitEdges} (curators: ${want.edges})`,
    c.edges !== want.edges && `enforced edges ${c.edges} (curators' explicit edges: ${want.edges})`,
    want.files !== undefined && c.files !== want.files && `files ${c.files} (curators: ${want.files})`,
    Math.abs(c.criticalPath - want.critical_path_s) >= 0.006 && `critical path ${c.criticalPath} (curators: ${want.critical_path_s})`,
    Math.abs(c.totalRuntime - want.total_runtime_s) >= 0.01 && `total runtime ${c.totalRuntime} (curators: ${want.total_runtime_s})`,
    c.depth !== want.depth && `depth ${c.depth} (curators: ${want.depth})`,
  ].filter((d): d is string => typeof d === 'string');
  rows.push({ file, tasks: c.tasks, loadSeconds, disagreements });
}

printTable([['file', 'tasks', 'load s', 'agrees with the curators'], ...rows.map((r) => [r.file, r.tasks, r.loadSeconds.toFixed(3), r.disagreements.length === 0 ? 'yes' : r.disagreements.join('; ')])]);
const wrong = rows.filter((r) => r.disagreements.length > 0);
if (wrong.length > 0) {
  for (const r of wrong) console.error(`error: ${r.file}: ${r.disagreements.join('; ')}`);
  process.exit(1);
}
console.log(`all ${rows.length} files of the curated set agree with SUMMARY.computed.json`);
