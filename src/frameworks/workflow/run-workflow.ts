/**
 * Running a workflow on a cluster from a program (and from `tidepool workflow run`): prepares the
 * shared directory (a replay writes the workflow's inputs at their recorded sizes × scale), submits
 * a job of the workflow kind and follows its progress through the control channel.
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Cluster, JobHandle } from '../../runtime/cluster.js';
import { requestJob } from '../../runtime/job-control.js';
import type { KindRef } from '../../runtime/kinds/job-kind.js';
import type { TaskRef } from '../../runtime/task.js';
import { replayBytes } from './replay-bytes.js';
import { sharedPath } from './task-execution.js';
import type { WorkflowBuilder } from './workflow-builder.js';
import type { MemberReport, WorkflowJobConfig, WorkflowResult } from './workflow-kind.js';
import { workflowInputs, type Workflow } from './workflow.js';

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
/** Built in, so that every node runs its own copy of the kind (see load-kind.ts). */
export const WORKFLOW_KIND: KindRef = { module: 'builtin:workflow', export: 'default' };
export const WORKFLOW_TASK: TaskRef = { module: new URL(`./replay-task${EXT}`, import.meta.url).href, export: 'default' };

export interface RunWorkflowOptions extends Omit<WorkflowJobConfig, 'source' | 'journal'> {
  /** A workflow file (read by every member: give a path they can all reach) … */
  file?: string;
  /** … or a workflow built in code. */
  builder?: WorkflowBuilder;
  /** Default: `<shared>/.journal/<workflow name>`. A run with the journal of a stopped one resumes it. */
  journal?: string;
  /** Forget the journal: run every task again. */
  fresh?: boolean;
  nodes?: number;
  /** Called about every `progressMs` with every member's figures. */
  onProgress?: (members: MemberReport[]) => void;
  progressMs?: number;
}

/** Writes the workflow's inputs into the shared directory at their recorded sizes × scale (existing ones of the right size are kept). */
export async function prepareReplayInputs(workflow: Workflow, shared: string, scale: number): Promise<number> {
  await mkdir(shared, { recursive: true });
  let written = 0;
  for (const f of workflowInputs(workflow)) {
    const file = workflow.files[f]!;
    const size = Math.round(file.size * scale);
    const existing = await stat(sharedPath(shared, file.name)).catch(() => undefined);
    if (existing?.size === size) continue;
    await writeFile(sharedPath(shared, file.name), replayBytes(file.key, size));
    written++;
  }
  return written;
}

export async function submitWorkflow(cluster: Cluster, workflow: Workflow, opts: RunWorkflowOptions): Promise<JobHandle> {
  const shared = resolve(opts.shared);
  await mkdir(shared, { recursive: true });
  if (opts.replay !== undefined) await prepareReplayInputs(workflow, shared, opts.replay);
  const { file, builder, nodes, journal, fresh, ...rest } = opts;
  delete rest.onProgress;
  delete rest.progressMs;
  const config: WorkflowJobConfig = {
    ...rest, shared,
    source: file !== undefined ? { path: resolve(file) } : { code: builder!.toSource() },
    journal: resolve(journal ?? `${shared}/.journal/${workflow.name.replace(/[^\w.-]/g, '_')}`),
  };
  if (fresh) await rm(config.journal, { recursive: true, force: true });
  return cluster.submit(WORKFLOW_TASK, null, { kind: WORKFLOW_KIND, input: config, ...(nodes !== undefined ? { nodes } : {}) });
}

/** Runs the workflow to its end; rejects with the failing task's error. */
export async function runWorkflow(cluster: Cluster, workflow: Workflow, opts: RunWorkflowOptions): Promise<WorkflowResult> {
  const job = await submitWorkflow(cluster, workflow, opts);
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  if (opts.onProgress) {
    const poll = async () => {
      const members = await requestJob(cluster.coordination, job.id, 'progress', null, { timeoutMs: 10_000 }).catch(() => undefined);
      if (ended) return; // an answer that arrives after the end is stale: no line after the result, no new poll
      if (members) opts.onProgress!(members as MemberReport[]);
      timer = setTimeout(() => void poll(), opts.progressMs ?? 1000);
    };
    timer = setTimeout(() => void poll(), opts.progressMs ?? 1000);
  }
  try {
    return await job.result<WorkflowResult>();
  } finally {
    ended = true;
    clearTimeout(timer);
  }
}
