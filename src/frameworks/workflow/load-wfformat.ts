/**
 * WfCommons JSON. WfFormat 1.5: `workflow.specification.tasks` (parents and children by task id,
 * `inputFiles`/`outputFiles` by file id), sizes in `specification.files`, runtimes in the separate
 * `workflow.execution.tasks` list; validated against the published schema first. The older 1.4
 * (and 1.3) layout: `workflow.tasks` with inline `files[]` (`link: input|output`), parents by task
 * name, runtimes on the task. Errors name the task and the line where its id (or name) appears.
 */
import { parseDocument } from 'yaml';
import { readInPieces } from './wfformat-pieces.js';
import { wfFormatChecks, wfFormatSchemaError } from './wfformat-schema.js';
import { WorkflowBuilder, type FileUse, type TaskDecl } from './workflow-builder.js';
import type { Workflow } from './workflow.js';
import { lineOfText, WorkflowError } from './workflow-error.js';

type Json = Record<string, unknown>;
interface SpecTask { id: string; name: string; category?: string; parents: string[]; inputFiles?: string[]; outputFiles?: string[] }
interface ExecTask { id: string; runtimeInSeconds: number; command?: { program?: string; arguments?: unknown[] } }

export function loadWfFormat(text: string, file: string, doc?: unknown): Workflow {
  let data: unknown = doc;
  if (data === undefined && text.includes('"specification"')) {
    const workflow = load15InPieces(text, file);
    if (workflow) return workflow;
  }
  if (data === undefined) {
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new WorkflowError(file, jsonErrorLine(text, err as Error), `malformed JSON: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (typeof data !== 'object' || data === null || typeof (data as Json).workflow !== 'object') {
    throw new WorkflowError(file, 1, 'no "workflow" object: not a WfCommons workflow');
  }
  const root = data as Json;
  const version = String(root.schemaVersion ?? '?');
  const lineOf = (id: string) => lineOfText(text, `"${id}"`);
  const wf = root.workflow as Json;
  const name = typeof root.name === 'string' ? root.name : file;
  return typeof wf.specification === 'object' ? load15(root, text, file, name, version, lineOf) : load14(wf, file, name, version, lineOf);
}

function load15(root: Json, text: string, file: string, name: string, version: string, lineOf: (id: string) => number | undefined): Workflow {
  const e = wfFormatSchemaError(root);
  if (e) {
    const path = e.instancePath.split('/').slice(1);
    const spec = (root.workflow as Json).specification as Json;
    const taskAt = path[2] === 'tasks' && path[3] !== undefined ? ((path[1] === 'specification' ? spec.tasks : ((root.workflow as Json).execution as Json).tasks) as Json[])[Number(path[3])] : undefined;
    const id = taskAt && typeof taskAt.id === 'string' ? taskAt.id : undefined;
    const line = id !== undefined ? lineOf(id) : lineOfText(text, `"${path[path.length - 1] ?? 'workflow'}"`);
    throw new WorkflowError(file, line, `${id !== undefined ? `task ${id}: ` : ''}${e.instancePath || '/'} ${e.message ?? 'is invalid'} (WfFormat schema)`);
  }
  const spec = (root.workflow as Json).specification as { tasks: SpecTask[]; files?: { id: string; sizeInBytes: number }[] };
  const files = new Columns15();
  for (const f of spec.files ?? []) files.file(f);
  for (const run of ((root.workflow as Json).execution as { tasks: ExecTask[] } | undefined)?.tasks ?? []) files.run(run);
  return build15(new WorkflowBuilder(name, { file, lineOf }, `WfFormat ${version}`), spec.tasks.map(declOf), files);
}

/** File sizes and execution records as columns: a million small objects fewer to keep until the build. */
class Columns15 {
  readonly fileIds: string[] = [];
  readonly fileSizes: number[] = [];
  readonly runIds: string[] = [];
  readonly runtimes: number[] = [];
  readonly commands = new Map<number, NonNullable<ExecTask['command']>>();

  file(f: { id: string; sizeInBytes: number }): void {
    this.fileIds.push(f.id);
    this.fileSizes.push(f.sizeInBytes);
  }

  run(r: ExecTask): void {
    if (r.command) this.commands.set(this.runIds.length, r.command);
    this.runIds.push(r.id);
    this.runtimes.push(r.runtimeInSeconds);
  }
}

/** The same, read a piece at a time (wfformat-pieces.ts); undefined when the text must be read whole. */
function load15InPieces(text: string, file: string): Workflow | undefined {
  const checks = wfFormatChecks();
  if (!checks) return undefined;
  const decls: TaskDecl[] = [];
  const columns = new Columns15();
  const skeleton = readInPieces(text, (array, item) => {
    if (array === 'specTasks') {
      if (!checks.specTask(item)) return false;
      decls.push(declOf(item as SpecTask));
    } else if (array === 'specFiles') {
      if (!checks.specFile(item)) return false;
      columns.file(item as { id: string; sizeInBytes: number });
    } else {
      if (!checks.execTask(item)) return false;
      columns.run(item as ExecTask);
    }
    return true;
  });
  if (!skeleton || !checks.rest(skeleton.doc)) return undefined;
  const root = skeleton.doc;
  const name = typeof root.name === 'string' ? root.name : file;
  return build15(new WorkflowBuilder(name, { file, lineOf: (id) => lineOfText(text, `"${id}"`) }, `WfFormat ${String(root.schemaVersion ?? '?')}`), decls, columns);
}

function declOf(t: SpecTask): TaskDecl {
  return { id: t.id, name: t.name, category: t.category ?? categoryOf(t.name), parents: t.parents, inputs: t.inputFiles ?? [], outputs: t.outputFiles ?? [] };
}

/** Runtimes and commands from the execution records, sizes from the file list, then the graph. */
function build15(builder: WorkflowBuilder, decls: TaskDecl[], c: Columns15): Workflow {
  builder.fileSizes(c.fileIds, c.fileSizes);
  // Execution records usually come in the order of the tasks: look one up by id only when they do not.
  let runById: Map<string, number> | undefined;
  const runOf = (id: string, i: number): number | undefined => {
    if (c.runIds[i] === id) return i;
    runById ??= new Map(c.runIds.map((r, k) => [r, k]));
    return runById.get(id);
  };
  let missing = 0;
  for (let i = 0; i < decls.length; i++) {
    const decl = decls[i]!;
    const run = runOf(decl.id, i);
    if (run === undefined) {
      missing++;
      builder.task(decl);
      continue;
    }
    decl.runtime = c.runtimes[run]!;
    const command = c.commands.get(run);
    if (command?.program) decl.command = { program: command.program, args: (command.arguments ?? []).map(String) };
    builder.task(decl);
  }
  const workflow = builder.build();
  if (missing > 0) workflow.warnings.push(`${missing} task(s) have no execution record: runtime 0`);
  return workflow;
}

function load14(wf: Json, file: string, name: string, version: string, lineOf: (id: string) => number | undefined): Workflow {
  if (!Array.isArray(wf.tasks)) throw new WorkflowError(file, lineOf('workflow'), '"workflow" has neither "specification" (1.5) nor "tasks" (1.4)');
  const builder = new WorkflowBuilder(name, { file, lineOf }, `WfFormat ${version}`);
  (wf.tasks as Json[]).forEach((t, i) => {
    const tName = typeof t.name === 'string' ? t.name : undefined;
    const id = typeof t.id === 'string' ? t.id : tName;
    if (id === undefined) throw new WorkflowError(file, undefined, `workflow.tasks[${i}] has neither "id" nor "name"`);
    const files = Array.isArray(t.files) ? (t.files as Json[]) : [];
    const uses = (link: string): FileUse[] => files.filter((f) => f.link === link).map((f) => ({ name: String(f.name), size: Number(f.sizeInBytes ?? f.size ?? 0) }));
    for (const f of files) {
      if (f.link !== 'input' && f.link !== 'output') throw new WorkflowError(file, lineOf(id), `task ${id}: file ${String(f.name)}: link must be "input" or "output", got ${JSON.stringify(f.link)}`);
    }
    const runtime = Number(t.runtimeInSeconds ?? t.runtime ?? 0);
    const command = t.command as { program?: string; arguments?: unknown[] } | undefined;
    // 1.4 names parents by task name; the id is then only the suffix (ID0000001): keep both reachable.
    builder.task({
      id: tName ?? id, name: tName ?? id, category: typeof t.category === 'string' ? t.category : categoryOf(tName ?? id),
      parents: Array.isArray(t.parents) ? (t.parents as unknown[]).map(String) : [], inputs: uses('input'), outputs: uses('output'), runtime,
      ...(command?.program ? { command: { program: command.program, args: (command.arguments ?? []).map(String) } } : {}),
    });
  });
  return builder.build();
}

/**
 * `mProject_ID0000001` → `mProject`; Nextflow's `NFCORE_RNASEQ:…:FASTQC (1)` → as written up to the space.
 * (`/_ID\d+$/` can only match at the last `_ID`; the regular expressions run only on names that may match.)
 */
function categoryOf(name: string): string {
  let category = name;
  const id = category.lastIndexOf('_ID');
  if (id >= 0 && /^\d+$/.test(category.slice(id + 3))) category = category.slice(0, id);
  if (category.endsWith(')') && category.includes(' (')) category = category.replace(/ \(.*\)$/, '');
  return category;
}

/** Node 20's JSON.parse names no position; the YAML parser (JSON is YAML) does. */
function jsonErrorLine(text: string, err: Error): number | undefined {
  const at = /position (\d+)/.exec(err.message);
  if (at) return lineOfText(text.slice(0, Number(at[1])) + '\u0000', '\u0000');
  return parseDocument(text, { prettyErrors: true }).errors[0]?.linePos?.[0].line;
}
