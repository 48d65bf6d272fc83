/**
 * Function tasks that add tasks while the workflow runs, for the dynamic-task tests. `split` reads
 * numbers (one a line) from list.txt and adds a `square-I` task per number and a `sum` task reading
 * their outputs; `sum` adds `report`, which reads sum.txt (written by `sum`) and count.txt (written by
 * `split`). Every task appends its id to the log named by its first argument: what ran, observed apart
 * from the runtime's own records. Given gates (paths), the squares wait until the first exists and sum
 * until the second does (the test holds them back while it stops the run or kills a node).
 */
import { appendFileSync, existsSync } from 'node:fs';
import type { AddedTask, FunctionTaskContext } from '../../../../src/frameworks/workflow/workflow.js';

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

/** Busy until `gate` exists (a task the test holds back); no gate: at once. */
async function waitForGate(gate: string | undefined): Promise<void> {
  if (gate === undefined || gate === '') return;
  while (!existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
}

export function split(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  const [log, squareGate = '', sumGate = ''] = task.args;
  appendFileSync(log!, `${task.id}\n`);
  const numbers = text(inputs['list.txt']).split('\n').filter((l) => l.trim() !== '');
  const squares: AddedTask[] = numbers.map((n, i) => ({ id: `square-${i}`, fn: { export: 'square' }, category: 'square', args: [log!, n, `sq-${i}.txt`, squareGate], outputs: [`sq-${i}.txt`] }));
  task.addTasks([...squares, { id: 'sum', fn: { export: 'sum' }, args: [log!, sumGate], inputs: numbers.map((_, i) => `sq-${i}.txt`), outputs: ['sum.txt'] }]);
  return { 'count.txt': `${numbers.length}\n` };
}

export async function square(_inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Promise<Record<string, string>> {
  const [log, n, output, gate] = task.args;
  await waitForGate(gate);
  appendFileSync(log!, `${task.id}\n`);
  return { [output!]: `${Number(n) ** 2}\n` };
}

export async function sum(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Promise<Record<string, string>> {
  const [log, gate] = task.args;
  await waitForGate(gate);
  appendFileSync(log!, `${task.id}\n`);
  const total = Object.values(inputs).reduce((s, b) => s + Number(text(b)), 0);
  task.addTasks([{ id: 'report', fn: { export: 'report' }, args: [log!], inputs: ['sum.txt', 'count.txt'], outputs: ['report.txt'] }]);
  return { 'sum.txt': `${total}\n` };
}

export function report(inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  const [log] = task.args;
  appendFileSync(log!, `${task.id}\n`);
  return { 'report.txt': `sum ${text(inputs['sum.txt']).trim()} of ${text(inputs['count.txt']).trim()} squares\n` };
}

/** Adds what it is told to (args[1], JSON): for the refusals. */
export function addAsTold(_inputs: Record<string, Uint8Array>, task: FunctionTaskContext): Record<string, string> {
  task.addTasks(JSON.parse(task.args[1]!) as AddedTask[]);
  return { 'told.txt': 'told\n' };
}
