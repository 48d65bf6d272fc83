/**
 * Which tasks a run of a workflow runs, given what earlier runs in the same shared directory did
 * (their completions by fingerprint, and the files they left there), without I/O.
 *
 * A task is up to date when a completion of its fingerprint is journaled, every final output it
 * writes is in the shared directory as that completion left it, and no task upstream of it runs.
 * Every other task runs — because it is new or changed (its fingerprint, which covers its program,
 * arguments, inputs and everything upstream, has no completion), because an output of it is missing
 * or was changed since, or because a task upstream of it runs. Intermediate files are not results:
 * one left in the shared directory (saved when a run was stopped, or written there in the shared
 * storage mode) is read from there if it is intact, and otherwise its up-to-date producer runs again
 * only to recreate it for the tasks that need it (a recreation changes nothing downstream).
 */
import type { Workflow } from './workflow.js';

export type RunReason =
  /** No completion of this fingerprint is journaled (new, edited, or an input changed). */
  | 'changed'
  /** A task upstream runs (`ref`: the parent that runs). */
  | 'upstream'
  /** An output is missing from the shared directory or changed since it was written (`ref`: the file). */
  | 'output'
  /** The run was asked to forget earlier runs. */
  | 'fresh'
  /** Up to date, but it runs again to recreate an intermediate file (`ref`: the file) a task that runs needs. */
  | 'recreate';

export interface RunPlan {
  /** Per task: 1 when it runs (to produce its outputs), 0 when it is up to date. */
  runs: Uint8Array;
  /** Per running or recreated task: why, and the task or file it names (-1 if none). */
  reason: Map<number, { why: RunReason; ref: number }>;
  /** Up-to-date tasks run again to recreate intermediate files (the dispatcher decides the same at run time). */
  recreate: number[];
  /** Files present at the start: intact intermediate files of up-to-date producers, and their completion markers. */
  saved: number[];
  toRun: number;
  upToDate: number;
}

export interface PlanInputs {
  /** Every task's fingerprint. */
  fingerprints: string[];
  /** Is a completion of this fingerprint journaled? */
  completed(fingerprint: string): boolean;
  /** Is this file (written by a task) in the shared directory exactly as its producer's completion left it? */
  intact(file: number): boolean;
  /** Forget earlier runs: every task runs. */
  fresh?: boolean;
}

export function planRun(workflow: Workflow, inputs: PlanInputs): RunPlan {
  const n = workflow.tasks.length;
  const runs = new Uint8Array(n);
  const reason = new Map<number, { why: RunReason; ref: number }>();
  let toRun = 0;
  for (const t of workflow.order) {
    const task = workflow.tasks[t]!;
    let why: { why: RunReason; ref: number } | undefined;
    if (inputs.fresh) why = { why: 'fresh', ref: -1 };
    else if (!inputs.completed(inputs.fingerprints[t]!)) why = { why: 'changed', ref: -1 };
    else {
      const parent = task.parents.find((p) => runs[p] === 1);
      if (parent !== undefined) why = { why: 'upstream', ref: parent };
      else {
        const lost = task.outputs.find((f) => {
          const file = workflow.files[f]!;
          return !file.marker && file.consumers.length === 0 && !inputs.intact(f);
        });
        if (lost !== undefined) why = { why: 'output', ref: lost };
      }
    }
    if (why) {
      runs[t] = 1;
      reason.set(t, why);
      toRun++;
    }
  }
  const saved: number[] = [];
  workflow.files.forEach((file, f) => {
    if (file.producer < 0 || runs[file.producer] === 1 || file.consumers.length === 0) return;
    if (file.marker || inputs.intact(f)) saved.push(f);
  });
  const recreate = recreations(workflow, runs, new Set(saved), reason);
  return { runs, reason, recreate, saved, toRun, upToDate: n - toRun };
}

/**
 * Up-to-date producers of intermediate files that a running (or recreated) task reads and that are
 * not in the shared directory: walked children first, so that a chain of missing files is recreated whole.
 */
function recreations(workflow: Workflow, runs: Uint8Array, saved: Set<number>, reason: RunPlan['reason']): number[] {
  const need = new Uint8Array(workflow.tasks.length);
  const out: number[] = [];
  for (let i = workflow.order.length - 1; i >= 0; i--) {
    const t = workflow.order[i]!;
    if (runs[t] === 0 && need[t] === 0) continue;
    for (const f of workflow.tasks[t]!.inputs) {
      const p = workflow.files[f]!.producer;
      if (p < 0 || runs[p] === 1 || need[p] === 1 || saved.has(f)) continue;
      need[p] = 1;
      reason.set(p, { why: 'recreate', ref: f });
    }
  }
  for (const t of workflow.order) if (need[t] === 1) out.push(t);
  return out;
}
