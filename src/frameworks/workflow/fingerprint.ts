/**
 * A task's fingerprint: a hash of everything that determines its outputs — what it runs (program
 * and arguments, a function's module and export, or a replay's runtime and output sizes), the names
 * it writes, and for each input either the stamp of a workflow input (its content hash, or its size
 * and mtime) or the fingerprint of the task that writes it. Parents are covered through their files
 * (an explicit edge no file implies is a completion marker, an input like any other), so a change
 * anywhere upstream changes every fingerprint below it. The workflow's name and the task numbers are
 * not part of it: the same computation has the same fingerprint in any workflow.
 */
import { createHash } from 'node:crypto';
import type { Workflow, WorkflowTask } from './workflow.js';

export interface FingerprintInputs {
  /** A workflow input's stamp (content hash, or size and mtime), as the run compares them. */
  inputStamp(file: number): string;
  /** Replay: every task is replayed at this scale (its command, if any, is not run). */
  replay?: number;
  /** Anything else that decides what a task runs (a resolved executable, a module's content), if known. */
  programStamp?(task: number): string;
}

/** What the task does, apart from its inputs' contents: the part a user edits. */
export function recipeOf(workflow: Workflow, task: WorkflowTask, replay: number | undefined): string {
  const names = (files: number[]) => files.filter((f) => !workflow.files[f]!.marker).map((f) => workflow.files[f]!.name);
  const outputs = task.outputs.filter((f) => !workflow.files[f]!.marker).map((f) => {
    const file = workflow.files[f]!;
    return replay === undefined ? file.name : `${file.name}\u0001${file.key}\u0001${Math.round(file.size * replay)}`;
  });
  let what: string;
  if (replay !== undefined) what = `replay\u0000${replay}\u0000${Math.max(0, task.runtime)}`;
  else if (task.fn) what = `fn\u0000${task.fn.module}\u0000${task.fn.export}\u0000${(task.args ?? []).join('\u0001')}`;
  else if (task.command) {
    const c = task.command;
    what = `cmd\u0000${c.program}\u0000${c.args.join('\u0001')}\u0000<${c.stdin ?? ''}\u0000>${c.stdout ?? ''}\u00002>${c.stderr ?? ''}`;
  }
  else what = 'none';
  return `${what}\u0000in\u0000${names(task.inputs).join('\u0001')}\u0000out\u0000${outputs.join('\u0001')}`;
}

/** A short hash of the recipe (journaled with each completion, to say later what changed). */
export function recipeHash(workflow: Workflow, task: WorkflowTask, replay: number | undefined): string {
  return createHash('sha256').update(recipeOf(workflow, task, replay)).digest('hex').slice(0, 16);
}

/** Every task's fingerprint (32 hex digits), computed parents first. */
export function computeFingerprints(workflow: Workflow, how: FingerprintInputs): string[] {
  const fps: string[] = new Array(workflow.tasks.length);
  for (const t of workflow.order) fps[t] = fingerprintOf(workflow, t, fps, how);
  return fps;
}

/** One task's fingerprint, its producers' being in `fps` already (tasks added at run time are fingerprinted one by one). */
export function fingerprintOf(workflow: Workflow, t: number, fps: readonly string[], how: FingerprintInputs): string {
  const task = workflow.tasks[t]!;
  const hash = createHash('sha256').update(recipeOf(workflow, task, how.replay));
  if (how.programStamp) hash.update(`\u0000prog\u0000${how.programStamp(t)}`);
  for (const f of task.inputs) {
    const file = workflow.files[f]!;
    hash.update(file.producer < 0 ? `\u0000i\u0000${file.name}\u0000${how.inputStamp(f)}` : `\u0000p\u0000${file.marker ? '' : file.name}\u0000${fps[file.producer]!}`);
  }
  return hash.digest('hex').slice(0, 32);
}
