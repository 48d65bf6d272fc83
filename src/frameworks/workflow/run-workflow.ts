/**
 * Running a workflow on a cluster from a program (and from `tidepool workflow run`): prepares the
 * shared directory (a replay writes the workflow's inputs at their recorded sizes × scale), plans
 * the run against earlier runs in the same directory (only what changed runs; a complete workflow has
 * nothing to do and submits nothing), records the run in a run directory, submits a job of the
 * workflow kind and follows its progress through the control channel.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Cluster, JobHandle } from '../../runtime/client/cluster.js';
import { requestJob } from '../../runtime/client/job-requests.js';
import { applyCatalogs, checkPrograms } from './catalog-resolution.js';
import { stillComplete, workflowKey, writeComplete, type CompleteRecord } from './complete-record.js';
import { unitsProblem } from './ame-units.js';
import { sha256OfFile, statStamp, type ChangeDetection, type FileStamp } from './file-stamp.js';
import { JournalHistory } from './journal.js';
import { prepareRun, type PreparedRun } from './prepare-run.js';
import { replayBytes } from './replay-bytes.js';
import type { SiteEntry } from './pegasus-catalogs.js';
import { createRunDir, stateDirOf } from './run-directory.js';
import { sharedPath } from './shared-path.js';
import type { WorkflowBuilder } from './workflow-builder.js';
import type { MemberReport, WorkflowJobConfig, WorkflowResult } from './workflow-kind.js';
import { copyWorkflow, finalOutputs, workflowInputs, type Workflow } from './workflow.js';
import { ExpansionLog } from './expansion-log.js';
import { applyAddition } from './workflow-growth.js';
import { WORKFLOW_KIND } from './workflow-kind-ref.js';


export interface RunWorkflowOptions extends Omit<WorkflowJobConfig, 'source' | 'run'> {
  /** A workflow file (read by every member: give a path they can all reach) … */
  file?: string;
  /** … or a workflow built in code. */
  builder?: WorkflowBuilder;
  /** Where runs are recorded (default `<shared>/.tidepool`): the journal earlier runs are compared with. */
  stateDir?: string;
  /** Forget earlier runs: run every task again. */
  fresh?: boolean;
  /** How a changed input or output is told apart: size and mtime (default), or content. */
  detection?: ChangeDetection;
  nodes?: number;
  /** A plan made already (planWorkflowRun) with the same options: used instead of planning again. */
  prepared?: PreparedRun;
  /** Called about every `progressMs` with every member's figures. */
  onProgress?: (members: MemberReport[]) => void;
  progressMs?: number;
}

/** A submitted run: the job, its run directory (journal, logs, provenance) and its plan. */
export interface WorkflowJob extends JobHandle {
  dir: string;
  prepared: PreparedRun;
}

/** Writes the workflow's inputs into the shared directory at their recorded sizes × scale (existing ones of the right size are kept). */
export async function prepareReplayInputs(workflow: Workflow, shared: string, scale: number): Promise<number> {
  await mkdir(shared, { recursive: true });
  let written = 0;
  for (const f of workflowInputs(workflow)) {
    const file = workflow.files[f]!;
    if (file.marker) continue;
    const size = Math.round(file.size * scale);
    const existing = await stat(sharedPath(shared, file.name)).catch(() => undefined);
    if (existing?.size === size) continue;
    await writeFile(sharedPath(shared, file.name), replayBytes(file.key, size));
    written++;
  }
  return written;
}

/** The key of a workflow's content and settings (complete-record.ts): the catalog files' contents and the site count too. */
async function keyOf(opts: Pick<RunWorkflowOptions, 'file' | 'builder' | 'replay' | 'detection' | 'catalogs'>): Promise<string | undefined> {
  const source = opts.file !== undefined ? await sha256OfFile(opts.file) : opts.builder ? createHash('sha256').update(JSON.stringify(opts.builder.toSource())).digest('hex') : undefined;
  if (source === undefined) return undefined;
  const c = opts.catalogs ?? {};
  const files = [...(c.tc ?? []), ...(c.rc ?? []), ...(c.sc ?? [])];
  const extra = opts.replay !== undefined ? '' : `${c.site ?? 'local'}\u0000${(await Promise.all(files.map((f) => sha256OfFile(f)))).join('\u0000')}`;
  return workflowKey(source, { detection: opts.detection ?? 'mtime', extra, ...(opts.replay !== undefined ? { replay: opts.replay } : {}) });
}

/**
 * Is this workflow complete in this shared directory, with its inputs and final outputs as the run
 * that completed it left them? Decided from the file's bytes without loading it (`tidepool workflow
 * run` asks before it parses a file).
 */
export async function alreadyComplete(opts: Pick<RunWorkflowOptions, 'file' | 'builder' | 'replay' | 'detection' | 'shared' | 'stateDir' | 'fresh' | 'catalogs'>): Promise<CompleteRecord | undefined> {
  if (opts.fresh) return undefined;
  const key = await keyOf(opts).catch(() => undefined);
  if (key === undefined) return undefined;
  return stillComplete(stateDirOf(resolve(opts.shared), opts.stateDir), key, resolve(opts.shared), opts.detection ?? 'mtime');
}

/**
 * Prepares the shared directory (replay inputs) and plans the run against earlier ones; submits
 * nothing. A real (not replayed) run first applies the catalogs and finds every program: a missing
 * executable or input is refused here, before anything runs.
 */
export async function planWorkflowRun(workflow: Workflow, opts: RunWorkflowOptions): Promise<PreparedRun> {
  const shared = resolve(opts.shared);
  await mkdir(shared, { recursive: true });
  // A workflow built in code is named by its declarations (a file by its stamps, compiled-workflow.ts): fingerprints are kept by it.
  if (workflow.contentKey === undefined && opts.builder) workflow.contentKey = createHash('sha256').update(JSON.stringify(opts.builder.toSource())).digest('hex').slice(0, 32);
  let site: SiteEntry | undefined;
  if (opts.replay !== undefined) await prepareReplayInputs(workflow, shared, opts.replay);
  else {
    const resolved = applyCatalogs(workflow, opts.catalogs ?? {});
    checkPrograms(workflow, resolved);
    site = resolved.directories;
  }
  const prepared = await prepareRun(workflow, {
    shared, ...(opts.stateDir !== undefined ? { stateDir: opts.stateDir } : {}), ...(opts.replay !== undefined ? { replay: opts.replay } : {}),
    ...(opts.detection !== undefined ? { detection: opts.detection } : {}), ...(opts.fresh ? { fresh: true } : {}),
  });
  return site ? { ...prepared, site } : prepared;
}

/** Records a planned run in a new run directory and submits its job (a plan with nothing to run ends at once). */
export async function submitPlanned(cluster: Cluster, prepared: PreparedRun, opts: RunWorkflowOptions): Promise<WorkflowJob> {
  const { workflow, plan, shared } = prepared;
  const { file, builder, nodes, ...rest } = opts;
  const wrongUnits = opts.units ? unitsProblem(opts.units) : undefined;
  if (wrongUnits) throw new Error(wrongUnits);
  for (const k of ['onProgress', 'progressMs', 'stateDir', 'fresh', 'detection', 'prepared'] as const) delete rest[k];
  const inputs: Record<string, FileStamp> = {};
  for (const [f, s] of prepared.inputs) inputs[workflow.files[f]!.name] = s;
  const dir = createRunDir(prepared.stateDir, {
    workflow: workflow.name, format: workflow.format, source: file !== undefined ? resolve(file) : '<code>', shared, started: new Date().toISOString(),
    tasks: workflow.tasks.length, toRun: plan.toRun, upToDate: plan.upToDate, inputs, detection: prepared.detection, ...(opts.replay !== undefined ? { replay: opts.replay } : {}),
  }, { fingerprints: prepared.fingerprints, upToDate: plan.runs.map((r) => 1 - r), saved: plan.saved });
  // Additions applied before the plan are the run's first: every member applies them before it reads the plan.
  const log = new ExpansionLog(dir);
  for (const rec of prepared.expansions) log.append(rec);
  const scratch = opts.scratch ?? prepared.site?.localScratch;
  const config: WorkflowJobConfig = {
    ...rest, shared, run: dir, ...(scratch !== undefined ? { scratch } : {}),
    source: file !== undefined ? { path: resolve(file) } : { code: builder!.toSource() },
  };
  // Its function modules: on an embedded cluster, admitted by the in-process nodes as the submitter's own files.
  const modules = [...new Set(workflow.tasks.flatMap((t) => (t.fn ? [t.fn.module] : [])))];
  const job = await cluster.submitJob({ kind: WORKFLOW_KIND, kindSpec: config, label: workflow.name, modules, ...(nodes !== undefined ? { nodes } : {}) });
  return Object.assign(job, { dir, prepared });
}

/** Plans and submits a run (even one with nothing to do: its job then ends at once with no task run). */
export async function submitWorkflow(cluster: Cluster, workflow: Workflow, opts: RunWorkflowOptions): Promise<WorkflowJob> {
  return submitPlanned(cluster, await planWorkflowRun(workflow, opts), opts);
}

/**
 * Runs the workflow to its end; rejects with the failing task's error. A workflow with nothing to
 * do (complete, its inputs and outputs unchanged) resolves at once with `nothingToDo`.
 */
export async function runWorkflow(cluster: Cluster, workflow: Workflow, opts: RunWorkflowOptions): Promise<WorkflowResult> {
  const done = opts.prepared ? undefined : await alreadyComplete(opts);
  if (done) return { tasks: 0, members: [], upToDate: done.tasks, nothingToDo: true };
  const prepared = opts.prepared ?? await planWorkflowRun(workflow, opts);
  if (nothingToDo(prepared)) {
    await recordComplete(prepared, opts, undefined);
    return { tasks: 0, members: [], upToDate: workflow.tasks.length, nothingToDo: true };
  }
  const job = await submitPlanned(cluster, prepared, opts);
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
    const result = await job.result<WorkflowResult>();
    if (!result.stopped) await recordComplete(prepared, opts, job.dir);
    return { ...result, upToDate: prepared.plan.upToDate, run: job.dir };
  } finally {
    ended = true;
    clearTimeout(timer);
  }
}

export const nothingToDo = (prepared: PreparedRun) => prepared.plan.toRun === 0 && prepared.plan.recreate.length === 0;

/**
 * Records the workflow as complete: its inputs as found, and its final outputs as the completions
 * that wrote them journaled (this run's, or an earlier one's for tasks that were up to date).
 */
export async function recordComplete(prepared: PreparedRun, opts: RunWorkflowOptions, runDir: string | undefined): Promise<void> {
  const key = await keyOf(opts);
  if (key === undefined) return;
  const { workflow, fingerprints } = runDir === undefined ? prepared : withRunAdditions(prepared, runDir);
  // This run's journal first; the whole history only for outputs of tasks that were up to date.
  const mine = runDir === undefined ? undefined : new JournalHistory([runDir]);
  let all: JournalHistory | undefined;
  const outputs: [string, FileStamp][] = [];
  for (const f of finalOutputs(workflow)) {
    const file = workflow.files[f]!;
    const fp = fingerprints[file.producer]!;
    const stamp = mine?.stampsOf(fp, file.name).at(-1) ?? (all ??= JournalHistory.load(prepared.stateDir)).stampsOf(fp, file.name).at(-1);
    if (!stamp) return; // not recorded (should not happen): no record, the next run plans in full
    outputs.push([file.name, stamp]);
  }
  const inputs: [string, FileStamp][] = [...prepared.inputs].map(([f, s]) => [workflow.files[f]!.name, s]);
  const sources: [string, FileStamp][] = [];
  for (const path of workflow.includes ?? []) {
    const stamp = statStamp(path);
    if (!stamp) return; // a sub-workflow's file went away: no record
    sources.push([path, { ...stamp, sha256: await sha256OfFile(path) }]);
  }
  writeComplete(prepared.stateDir, key, { workflow: workflow.name, tasks: workflow.tasks.length, run: runDir ?? '', inputs, outputs, ...(sources.length > 0 ? { sources } : {}) });
}

/** The planned workflow with the tasks added while the run went (from its expansion log), on a copy. */
function withRunAdditions(prepared: PreparedRun, runDir: string): { workflow: Workflow; fingerprints: string[] } {
  const added = new ExpansionLog(runDir).readNew().filter((r) => !r.before);
  if (added.length === 0) return prepared;
  const workflow = copyWorkflow(prepared.workflow);
  const fingerprints = [...prepared.fingerprints];
  for (const rec of added) {
    applyAddition(workflow, workflow.taskIndex(rec.by), rec.tasks);
    fingerprints.push(...rec.fingerprints);
  }
  return { workflow, fingerprints };
}
