/**
 * Loading a large workflow: a synthetic WfFormat 1.5 file of N tasks (default 1,000,000; two file-
 * implied parents per task) is generated as text, then loaded as `tidepool workflow` loads it:
 * parsed, schema-validated and compiled (numbering, file-implied edges, topological order, critical
 * path). Only the load is timed. Baselines measured in the same run, after it: a bare JSON.parse of
 * the same text (what any loader must at least spend) and the schema validation alone.
 *
 *   npx tsx bench/workflow-load.ts [N]
 */
import { writeFileSync } from 'node:fs';
import { parseWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { wfFormatSchemaError } from '../src/frameworks/workflow/wfformat-schema.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const n = Number(process.argv[2] ?? 1_000_000);
const text = syntheticWfFormat({ tasks: n });

/** Wall and CPU seconds of `run` (CPU: this process, all threads — the garbage collector's included). */
function timed<T>(run: () => T): { value: T; seconds: number; cpuSeconds: number } {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const value = run();
  const cpu = process.cpuUsage(cpu0);
  return { value, seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

const machineBefore = machineInfo();
const loaded = timed(() => parseWorkflow(text, `synthetic-${n}.json`));
const counts = loaded.value.counts;
loaded.value = undefined as never; // the baselines run without the loaded workflow in the heap
const parsed = timed(() => JSON.parse(text) as unknown);
const validated = timed(() => wfFormatSchemaError(parsed.value));
if (validated.value) throw new Error(`the synthetic file breaks the schema: ${JSON.stringify(validated.value)}`);

const s = (x: number) => Number(x.toFixed(2));
printTable([
  ['step', 'wall s', 'CPU s', '× JSON.parse (wall)'],
  ['JSON.parse of the text (baseline)', s(parsed.seconds), s(parsed.cpuSeconds), 1],
  ['schema validation alone', s(validated.seconds), s(validated.cpuSeconds), s(validated.seconds / parsed.seconds)],
  ['load (parse + validate + compile)', s(loaded.seconds), s(loaded.cpuSeconds), s(loaded.seconds / parsed.seconds)],
]);
const machine = machineInfo();
const result = {
  tasks: counts.tasks, edges: counts.edges, files: counts.files, megabytes: Math.round(text.length / 2 ** 20),
  loadSeconds: s(loaded.seconds), cpuSeconds: s(loaded.cpuSeconds), targetSeconds: 10,
  baselines: { jsonParseSeconds: s(parsed.seconds), jsonParseCpuSeconds: s(parsed.cpuSeconds), validateSeconds: s(validated.seconds), validateCpuSeconds: s(validated.cpuSeconds) },
  loadOverJsonParse: s(loaded.seconds / parsed.seconds),
  loadAverageBefore: machineBefore.loadAverage,
  machine,
  note: `measured on a 2-core machine shared with other engineers (1-minute load average ${machineBefore.loadAverage} before, ${machine.loadAverage} after; wall time includes waiting for a core, cpuSeconds is the load's own CPU time, garbage collection included)`,
};
console.log(JSON.stringify(result));
if (n === 1_000_000) writeFileSync(resultsFile('workflow-load'), JSON.stringify(result, null, 2) + '\n');
