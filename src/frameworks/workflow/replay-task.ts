/**
 * The task type a workflow's worker threads run (the job spec's `ref`): a replayed task computes for
 * its recorded runtime × scale and writes each output at its recorded size × scale (as WfCommons'
 * WfBench does); a function task calls the application's exported function with its inputs' bytes
 * (and collects the tasks it adds).
 * Command tasks run as child processes from the node's main thread instead (task-execution.ts).
 */
import { resolveModule } from '../../runtime/worker/builtin-code.js';
import { defineTask } from '../../runtime/worker/task.js';
import { replayBytes } from './replay-bytes.js';
import type { AddedTask, WorkflowFunction } from './workflow.js';

export interface ReplayJob { kind: 'replay'; seconds: number; outputs: { key: string; name: string; size: number }[] }

export type WorkerJob =
  | ReplayJob
  /** Short replays sent in one message (their outputs come back as a list, in order). */
  | { kind: 'bundle'; jobs: ReplayJob[] }
  | { kind: 'function'; module: string; export: string; id: string; args: string[]; inputs: Record<string, Uint8Array>; outputs: string[] };

/** Busy computation (not a sleep): the core is used for as long as the recorded task used one. */
function compute(seconds: number): void {
  const end = performance.now() + seconds * 1000;
  let x = 1;
  while (performance.now() < end) for (let i = 0; i < 10_000; i++) x = (x * 1103515245 + 12345) >>> 0;
  if (x === 42) console.log(''); // keeps the loop from being optimised away
}

function replay(job: ReplayJob): Record<string, Uint8Array> {
  compute(job.seconds);
  const out: Record<string, Uint8Array> = {};
  for (const o of job.outputs) out[o.name] = replayBytes(o.key, o.size);
  return out;
}

/** What a function job returns: its outputs by name, and the tasks it added (if any). */
export interface FunctionResult {
  files: Record<string, Uint8Array>;
  added?: AddedTask[];
}

export default defineTask<WorkerJob, Record<string, Uint8Array> | Record<string, Uint8Array>[] | FunctionResult | null>({
  name: 'workflow-task',
  async run(job, ctx) {
    if (job.kind === 'replay') return ctx.emit(replay(job));
    if (job.kind === 'bundle') return ctx.emit(job.jobs.map(replay));
    const mod = (await import(resolveModule(job.module))) as Record<string, unknown>;
    const fn = mod[job.export] as WorkflowFunction | undefined;
    if (typeof fn !== 'function') throw new Error(`${job.module} has no exported function "${job.export}"`);
    const added: AddedTask[] = [];
    const produced = await fn(job.inputs, {
      id: job.id, args: job.args,
      addTasks: (tasks) => {
        if (!Array.isArray(tasks)) throw new TypeError(`task ${job.id}: addTasks takes a list of tasks`);
        added.push(...tasks);
      },
    });
    const files: Record<string, Uint8Array> = {};
    for (const name of job.outputs) {
      const value = produced?.[name];
      if (value === undefined) throw new Error(`task ${job.id} did not return its output "${name}"`);
      files[name] = typeof value === 'string' ? new TextEncoder().encode(value) : value;
    }
    ctx.emit(added.length > 0 ? { files, added } : { files });
  },
  result: { initial: () => null, combine: (_a, b) => b },
});
