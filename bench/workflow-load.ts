/**
 * Loading a large workflow: a synthetic WfFormat 1.5 file of N tasks (default 1,000,000; two file-
 * implied parents per task) is generated as text, then parsed, schema-validated and compiled
 * (numbering, file-implied edges, topological order, critical path). Only the load is timed.
 *
 *   npx tsx bench/workflow-load.ts [N]
 */
import { writeFileSync } from 'node:fs';
import { parseWorkflow } from '../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../src/frameworks/workflow/synthetic.js';
import { machineInfo, resultsFile } from './machine.js';

const n = Number(process.argv[2] ?? 1_000_000);
const text = syntheticWfFormat({ tasks: n });
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const wf = parseWorkflow(text, `synthetic-${n}.json`);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const result = { tasks: wf.counts.tasks, edges: wf.counts.edges, files: wf.counts.files, megabytes: Math.round(text.length / 2 ** 20), loadSeconds: Number(seconds.toFixed(2)), cpuSeconds: Number(cpuSeconds.toFixed(2)), targetSeconds: 10, machine: machineInfo(), note: 'measured on a 2-core machine shared with other engineers (wall time includes waiting for a core; cpuSeconds is the load\'s own CPU time)' };
console.log(JSON.stringify(result));
if (n === 1_000_000) writeFileSync(resultsFile('workflow-load'), JSON.stringify(result, null, 2) + '\n');
