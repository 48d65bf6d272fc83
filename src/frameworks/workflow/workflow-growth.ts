/**
 * Tasks added to a running workflow by one of its tasks (AME's dynamic stages; Snakemake's
 * checkpoints; Dask's futures submitted from a task), without I/O: a task returns, with its outputs,
 * declarations of further tasks (`task.addTasks(...)` in a function, a JSON file a command writes).
 * They are checked against the workflow as it stands — new ids, outputs that are new files, inputs
 * that are files of the workflow or outputs of tasks added with them, no cycle — and appended: numbered
 * after the tasks already there, their files after the files, their order after the order. Nothing
 * already there changes but the consumers of the files they read (and, for a task added with the
 * adding task as explicit parent, that task's completion marker), so every member that applies the
 * same additions in the same order has the same numbers.
 *
 * A task added at run time waits for tasks already in the workflow through the files it reads; an
 * explicit parent may only be a task added with it or the task adding it. Tasks already there cannot
 * be given inputs from added tasks: to gather what added tasks write, add the gathering task too.
 */
import type { AddedTask, Workflow, WorkflowTask } from './workflow.js';
import type { TaskDecl } from './workflow-builder.js';

/** At most this many tasks added by one task (a larger stage is added by several). */
export const MAX_ADDED_TASKS = 100_000;

/** Additions that cannot be applied: the message names the adding task and the added one. */
export class AdditionError extends Error {
  override readonly name = 'AdditionError';
}

const fileKeys = new WeakMap<Workflow, Map<string, number>>();

/** File number by key (built once per workflow, kept up to date by `applyAddition`). */
function fileIndex(workflow: Workflow): Map<string, number> {
  let index = fileKeys.get(workflow);
  if (!index) {
    index = new Map();
    workflow.files.forEach((f, i) => index!.set(f.key, i));
    fileKeys.set(workflow, index);
  }
  return index;
}

/** The number of the file with this key (a name several tasks write has one key per writer), if any. */
export function fileNumber(workflow: Workflow, key: string): number | undefined {
  return fileIndex(workflow).get(key);
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * Checks what task `by` adds and returns it as declarations (a function's module filled in), or throws
 * an AdditionError naming the adding task, the added task and what is wrong.
 */
export function checkAddition(workflow: Workflow, by: number, added: unknown): TaskDecl[] {
  const adder = workflow.tasks[by]!;
  const fail = (detail: string): never => {
    throw new AdditionError(`task ${adder.id} added ${detail}`);
  };
  if (!Array.isArray(added) || added.length === 0) fail('no tasks (addTasks takes a non-empty list of tasks)');
  const list = added as unknown[];
  if (list.length > MAX_ADDED_TASKS) fail(`${list.length} tasks, more than ${MAX_ADDED_TASKS} at once`);
  const files = fileIndex(workflow);
  const ids = new Map<string, number>();
  const outputsOf = new Map<string, number>();
  const decls: TaskDecl[] = [];
  list.forEach((raw, i) => {
    const at = (detail: string) => fail(`task ${typeof (raw as AddedTask)?.id === 'string' && (raw as AddedTask).id !== '' ? (raw as AddedTask).id : `#${i + 1}`}: ${detail}`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return at('not an object');
    const a = raw as AddedTask;
    if (typeof a.id !== 'string' || a.id === '') return at('needs a non-empty string id');
    if (workflow.taskIndex(a.id) >= 0) return at('a task of that id is already in the workflow');
    if (ids.has(a.id)) return at(`added twice (first as #${ids.get(a.id)! + 1})`);
    ids.set(a.id, i);
    const decl: TaskDecl = { id: a.id };
    if ((a.fn === undefined) === (a.command === undefined)) return at('needs exactly one of fn and command');
    if (a.fn !== undefined) {
      const module = a.fn.module ?? adder.fn?.module;
      if (typeof module !== 'string' || typeof a.fn.export !== 'string' || a.fn.export === '') return at('fn needs an export (and a module, unless the adding task is a function)');
      decl.fn = { module, export: a.fn.export };
    } else if (Array.isArray(a.command)) {
      if (a.command.length === 0 || !isStrings(a.command)) return at('command needs a program and string arguments');
      decl.command = { program: a.command[0]!, args: a.command.slice(1) };
    } else {
      const c = a.command!;
      if (typeof c !== 'object' || typeof c.program !== 'string' || c.program === '' || !isStrings(c.args ?? [])) return at('command needs a program and string arguments');
      decl.command = { program: c.program, args: c.args ?? [], ...(c.stdin !== undefined ? { stdin: c.stdin } : {}), ...(c.stdout !== undefined ? { stdout: c.stdout } : {}), ...(c.stderr !== undefined ? { stderr: c.stderr } : {}) };
    }
    for (const key of ['args', 'inputs', 'outputs', 'parents'] as const) {
      if (a[key] !== undefined && !isStrings(a[key])) return at(`${key} must be a list of strings`);
    }
    if (a.args) decl.args = a.args;
    if (a.category !== undefined) {
      if (typeof a.category !== 'string') return at('category must be a string');
      decl.category = a.category;
    }
    for (const [key, ok] of [['runtime', (x: number) => Number.isFinite(x) && x >= 0], ['cores', (x: number) => Number.isInteger(x) && x >= 1], ['memoryMb', (x: number) => Number.isFinite(x) && x >= 0], ['timeoutSeconds', (x: number) => Number.isFinite(x) && x > 0]] as const) {
      const v = a[key];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !ok(v)) return at(`${key} must be ${key === 'cores' ? 'a whole number of at least 1' : key === 'timeoutSeconds' ? 'a positive number' : 'a non-negative number'}`);
      decl[key] = v;
    }
    const redirects = decl.command ? [decl.command.stdin, decl.command.stdout, decl.command.stderr] : [];
    const inputs = [...new Set([...(a.inputs ?? []), ...(redirects[0] !== undefined ? [redirects[0]] : [])])];
    const outputs = [...new Set([...(a.outputs ?? []), ...redirects.slice(1).filter((r): r is string => r !== undefined)])];
    for (const o of outputs) {
      if (files.has(o)) return at(`output ${o} is already a file of the workflow`);
      if (outputsOf.has(o)) return at(`output ${o} is also written by added task ${(list[outputsOf.get(o)!] as AddedTask).id}`);
      if (inputs.includes(o)) return at(`${o} is both its input and its output`);
      outputsOf.set(o, i);
    }
    decl.inputs = inputs;
    decl.outputs = outputs;
    decl.parents = a.parents ?? [];
    decls.push(decl);
  });
  // Inputs and parents once every added task's outputs and ids are known.
  decls.forEach((d) => {
    const at = (detail: string) => fail(`task ${d.id}: ${detail}`);
    for (const name of d.inputs as string[]) {
      if (outputsOf.has(name) || files.has(name)) continue;
      at(`input ${name} is neither a file of the workflow nor an output of a task added with it`);
    }
    for (const p of d.parents!) {
      if (p === d.id) at('names itself as a parent');
      if (ids.has(p) || p === adder.id) continue;
      const q = workflow.taskIndex(p);
      if (q < 0) at(`parent ${p} is not a task of the workflow nor one added with it`);
      const readsFrom = (d.inputs as string[]).some((name) => files.has(name) && workflow.files[files.get(name)!]!.producer === q);
      if (!readsFrom) at(`parent ${p} is a task already in the workflow that it reads no file of (a task added at run time waits for those through their files, or for the task adding it)`);
    }
  });
  const cycle = cycleAmong(decls, outputsOf);
  if (cycle) fail(`tasks in a dependency cycle: ${cycle.join(' -> ')}`);
  return decls;
}

/** A cycle among added tasks (by explicit parents and by files), as ids, or undefined. */
function cycleAmong(decls: TaskDecl[], outputsOf: Map<string, number>): string[] | undefined {
  const index = new Map(decls.map((d, i) => [d.id, i]));
  const parents = decls.map((d) => [
    ...d.parents!.map((p) => index.get(p)).filter((q): q is number => q !== undefined),
    ...(d.inputs as string[]).map((name) => outputsOf.get(name)).filter((q): q is number => q !== undefined),
  ]);
  const state = new Uint8Array(decls.length); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const visit = (t: number): number[] | undefined => {
    state[t] = 1;
    path.push(t);
    for (const p of parents[t]!) {
      if (state[p] === 1) return [...path.slice(path.indexOf(p)), p];
      if (state[p] === 0) {
        const found = visit(p);
        if (found) return found;
      }
    }
    path.pop();
    state[t] = 2;
    return undefined;
  };
  for (let t = 0; t < decls.length; t++) {
    if (state[t] !== 0) continue;
    const found = visit(t);
    if (found) return found.reverse().map((q) => decls[q]!.id);
  }
  return undefined;
}

/**
 * Appends checked declarations to the workflow (in place). Returns the new task numbers, parents
 * first (the order a fingerprint is computed in).
 */
export function applyAddition(workflow: Workflow, by: number, decls: TaskDecl[]): number[] {
  const files = fileIndex(workflow);
  const first = workflow.tasks.length;
  const ids = new Map<string, number>();
  decls.forEach((d, i) => ids.set(d.id, first + i));
  const newFile = (key: string, producer: number, marker: boolean): number => {
    const f = workflow.files.length;
    workflow.files.push({ key, name: key, size: 0, producer, consumers: [], ...(marker ? { marker: true } : {}) });
    files.set(key, f);
    return f;
  };
  const tasks: WorkflowTask[] = decls.map((d) => {
    const task: WorkflowTask = { id: d.id, name: d.id, category: d.category ?? d.id, runtime: d.runtime ?? 0, inputs: [], outputs: [], parents: [] };
    for (const key of ['command', 'fn', 'args', 'cores', 'memoryMb', 'timeoutSeconds'] as const) if (d[key] !== undefined) (task as unknown as Record<string, unknown>)[key] = d[key];
    return task;
  });
  workflow.tasks.push(...tasks);
  decls.forEach((d, i) => {
    for (const name of d.outputs as string[]) tasks[i]!.outputs.push(newFile(name, first + i, false));
  });
  let edges = 0;
  decls.forEach((d, i) => {
    const t = first + i;
    const task = tasks[i]!;
    const parents = new Set<number>();
    for (const name of d.inputs as string[]) {
      const f = files.get(name)!;
      task.inputs.push(f);
      workflow.files[f]!.consumers.push(t);
      if (workflow.files[f]!.producer >= 0) parents.add(workflow.files[f]!.producer);
    }
    for (const ref of d.parents!) {
      const p = ids.get(ref) ?? (ref === workflow.tasks[by]!.id ? by : workflow.taskIndex(ref));
      if (parents.has(p)) continue;
      // An explicit edge no file implies: the parent's completion marker (made if it has none).
      const key = `#done:${workflow.tasks[p]!.id}`;
      let m = files.get(key);
      if (m === undefined) {
        m = newFile(key, p, true);
        workflow.tasks[p]!.outputs.push(m);
      }
      task.inputs.push(m);
      workflow.files[m]!.consumers.push(t);
      parents.add(p);
    }
    task.parents = [...parents].sort((x, y) => x - y);
    edges += task.parents.length;
  });
  // Parents first: added tasks depend only on tasks before them or among them.
  const order = topological(tasks.map((task) => task.parents.filter((p) => p >= first).map((p) => p - first))).map((i) => first + i);
  const grown = new Int32Array(workflow.order.length + order.length);
  grown.set(workflow.order);
  grown.set(order, workflow.order.length);
  workflow.order = grown;
  workflow.counts.tasks = workflow.tasks.length;
  workflow.counts.edges += edges;
  workflow.counts.files += decls.reduce((n, d) => n + (d.outputs as string[]).length, 0);
  workflow.counts.totalRuntime += decls.reduce((n, d) => n + (d.runtime ?? 0), 0);
  const before = workflow.taskIndex;
  workflow.taskIndex = (id) => ids.get(id) ?? before(id);
  return order;
}

function topological(parents: number[][]): number[] {
  const n = parents.length;
  const children: number[][] = parents.map(() => []);
  const waiting = parents.map((ps) => ps.length);
  parents.forEach((ps, t) => ps.forEach((p) => children[p]!.push(t)));
  const out: number[] = [];
  for (let t = 0; t < n; t++) if (waiting[t] === 0) out.push(t);
  for (let i = 0; i < out.length; i++) for (const c of children[out[i]!]!) if (--waiting[c]! === 0) out.push(c);
  return out;
}
