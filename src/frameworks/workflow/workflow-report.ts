/** What `tidepool workflow info|run` print: a workflow's shape, a progress line, a run's summary. */
import type { MemberReport, WorkflowResult } from './workflow-kind.js';
import { finalOutputs, workflowInputs, type Workflow } from './workflow.js';

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function describeWorkflow(w: Workflow) {
  const stages = new Map<string, { tasks: number; runtime: number }>();
  for (const t of w.tasks) {
    const s = stages.get(t.category) ?? { tasks: 0, runtime: 0 };
    s.tasks++;
    s.runtime += t.runtime;
    stages.set(t.category, s);
  }
  const bytes = (files: number[]) => files.reduce((n, f) => n + w.files[f]!.size, 0);
  const inputs = bytes(workflowInputs(w));
  const finals = bytes(finalOutputs(w));
  const intermediate = w.files.reduce((n, f) => n + (f.producer >= 0 && f.consumers.length > 0 ? f.size : 0), 0);
  const c = w.counts;
  const text = [
    `${w.name} (${w.format}): ${c.tasks} tasks, ${c.edges} dependencies (${c.explicitEdges} explicit, ${c.fileEdges} from files), ${c.files} files, depth ${c.depth}`,
    `total runtime ${c.totalRuntime.toFixed(2)} s, critical path ${c.criticalPath.toFixed(2)} s`,
    `data: inputs ${mb(inputs)}, intermediate ${mb(intermediate)}, final outputs ${mb(finals)}`,
    ...[...stages].map(([name, s]) => `  ${name}: ${s.tasks} tasks, ${s.runtime.toFixed(2)} s`),
    ...w.warnings.map((x) => `note: ${x}`),
  ].join('\n');
  return { name: w.name, format: w.format, ...c, bytes: { inputs, intermediate, finals }, stages: Object.fromEntries(stages), warnings: w.warnings, text };
}

function totals(members: MemberReport[]) {
  const sum = (k: keyof MemberReport) => members.reduce((n, m) => n + (m[k] as number), 0);
  return {
    ready: sum('ready'), running: sum('running'), waiting: sum('waiting'), completed: sum('completed'), recreated: sum('recreated'), retries: sum('retries'),
    steals: sum('steals'), bytesFromShared: sum('bytesFromShared'), bytesToShared: sum('bytesToShared'), bytesPeer: sum('bytesPeer'),
  };
}

export function progressLine(w: Workflow, members: MemberReport[]): string {
  const t = totals(members);
  return `tasks ${t.completed}/${w.counts.tasks} done, ${t.running} running, ${t.ready} ready, ${t.waiting} waiting; moved ${mb(t.bytesFromShared)} from shared, ${mb(t.bytesToShared)} to shared, ${mb(t.bytesPeer)} peer to peer`;
}

export function summarizeRun(w: Workflow, result: WorkflowResult, seconds: number) {
  const t = totals(result.members);
  const upToDate = result.upToDate ?? 0;
  if (result.nothingToDo) {
    return { tasks: w.counts.tasks, seconds, nodes: 0, ...t, upToDate, nothingToDo: true, text: `${w.name}: nothing to do: all ${w.counts.tasks} tasks are up to date` };
  }
  const ran = upToDate > 0 ? `${t.completed} of ${w.counts.tasks} tasks run (${upToDate} up to date)` : `${t.completed} of ${w.counts.tasks} tasks done`;
  const text = `${w.name}: ${ran} in ${seconds.toFixed(2)} s on ${result.members.length} nodes` +
    ` (${t.retries} retries, ${t.recreated} re-run to recreate lost files, ${t.steals} stolen)\n` +
    `bytes: ${mb(t.bytesFromShared)} from shared storage, ${mb(t.bytesToShared)} to shared storage, ${mb(t.bytesPeer)} peer to peer` +
    (result.run !== undefined ? `\nrun directory: ${result.run}` : '');
  return { tasks: w.counts.tasks, seconds, nodes: result.members.length, ...t, upToDate, ...(result.run !== undefined ? { run: result.run } : {}), text };
}
