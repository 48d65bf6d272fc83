/**
 * Before a run, on the submitting side: the workflow inputs are found in the shared directory and
 * stamped (a missing one is an error naming the task that reads it, before anything runs), every
 * task is fingerprinted, the journal of earlier runs is read by fingerprint, and the rerun planner
 * decides what runs and why (`--dry-run` prints exactly this).
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fingerprintOf, recipeHash, type FingerprintInputs } from './fingerprint.js';
import { fingerprintsReusing } from './fingerprint-cache.js';
import { expansionsByFingerprint, type ExpansionRecord } from './expansion-log.js';
import { sha256OfFile, statStamp, unchangedFromAny, type ChangeDetection, type FileStamp } from './file-stamp.js';
import { JournalHistory, lastCompletions, runDirs } from './journal.js';
import type { SiteEntry } from './pegasus-catalogs.js';
import { planRun, type RunPlan } from './rerun-plan.js';
import { readRunInfo, stateDirOf } from './run-directory.js';
import { sharedName, sharedPath } from './shared-path.js';
import { WorkflowError } from './workflow-error.js';
import { copyWorkflow, type Workflow } from './workflow.js';
import type { TaskDecl } from './workflow-builder.js';
import { applyAddition, checkAddition } from './workflow-growth.js';

export interface PrepareOptions {
  shared: string;
  /** Where runs are recorded (default `<shared>/.tidepool`). */
  stateDir?: string;
  replay?: number;
  /** How a changed file is told apart: size and mtime (default), or content. */
  detection?: ChangeDetection;
  /** Forget earlier runs: every task runs. */
  fresh?: boolean;
}

export interface PreparedRun {
  workflow: Workflow;
  shared: string;
  stateDir: string;
  detection: ChangeDetection;
  replay?: number;
  fingerprints: string[];
  plan: RunPlan;
  /** Workflow inputs (by file number) as found. */
  inputs: Map<number, FileStamp>;
  /** The run's site's directories, from the site catalog (a real run). */
  site?: SiteEntry;
  /** Tasks added at run time by earlier runs' tasks that are still the same computation, added again before the plan (the run's first additions). */
  expansions: ExpansionRecord[];
}

/** Stamps every workflow input; refuses, naming the reading task (and its line), if one is missing. */
export async function stampInputs(workflow: Workflow, shared: string, stateDir: string, detection: ChangeDetection): Promise<Map<number, FileStamp>> {
  const stamps = new Map<number, FileStamp>();
  const cache = detection === 'content' ? new HashCache(stateDir) : undefined;
  const missing: number[] = [];
  for (let f = 0; f < workflow.files.length; f++) {
    const file = workflow.files[f]!;
    if (file.producer >= 0 || file.marker) continue;
    const path = file.location ?? sharedPath(shared, file.name);
    const stamp = statStamp(path);
    if (!stamp) {
      missing.push(f);
      continue;
    }
    if (cache) stamp.sha256 = await cache.hash(path, file.name, stamp);
    stamps.set(f, stamp);
  }
  if (missing.length > 0) {
    const first = workflow.files[missing[0]!]!;
    const reader = workflow.tasks[first.consumers[0]!]!;
    const more = missing.length > 1 ? ` (and ${missing.length - 1} more: ${missing.slice(1, 4).map((f) => workflow.files[f]!.name).join(', ')}${missing.length > 4 ? ', …' : ''})` : '';
    const where = first.location !== undefined ? `not at ${first.location}, where the replica catalog puts it` : `not in the shared directory ${shared}`;
    throw new WorkflowError(workflow.source, workflow.lineOf?.(reader.id), `task ${reader.id}: input ${first.name} is ${where}${more}`);
  }
  cache?.flush();
  return stamps;
}

export async function prepareRun(loaded: Workflow, opts: PrepareOptions): Promise<PreparedRun> {
  let workflow = loaded;
  const stateDir = stateDirOf(opts.shared, opts.stateDir);
  const detection = opts.detection ?? 'mtime';
  const inputs = await stampInputs(workflow, opts.shared, stateDir, detection);
  const how: FingerprintInputs = {
    inputStamp: (f) => {
      const s = inputs.get(f)!;
      return detection === 'content' ? s.sha256! : `${s.size}:${s.mtimeNs}`;
    },
    ...(opts.replay !== undefined ? { replay: opts.replay } : {}),
  };
  const fingerprints = fingerprintsReusing(workflow, how, stateDir);
  const history = opts.fresh ? undefined : JournalHistory.load(stateDir);
  const { grown, expansions, addAgain } = history ? addRecorded(workflow, fingerprints, how, history, runDirs(stateDir)) : { grown: workflow, expansions: [], addAgain: new Set<string>() };
  workflow = grown;
  // A written file is intact when its producer's completion recorded it and it is still as recorded.
  const intact = new Uint8Array(workflow.files.length);
  if (history) {
    for (let f = 0; f < workflow.files.length; f++) {
      const file = workflow.files[f]!;
      if (file.producer < 0 || file.marker) continue;
      const recorded = history.stampsOf(fingerprints[file.producer]!, sharedName(file));
      if (recorded.length === 0) continue;
      const path = sharedPath(opts.shared, sharedName(file));
      const now = statStamp(path);
      if (now && (await unchangedFromAny(path, recorded, now, detection))) intact[f] = 1;
    }
  }
 
  const plan = planRun(workflow, {
    fingerprints,
    completed: (fp) => (history?.completed.has(fp) ?? false) && !addAgain.has(fp),
    intact: (f) => intact[f] === 1,
    ...(opts.fresh ? { fresh: true } : {}),
  });
  const prepared: PreparedRun = { workflow, shared: opts.shared, stateDir, detection, fingerprints, plan, inputs, expansions, ...(opts.replay !== undefined ? { replay: opts.replay } : {}) };
 
  if (history) comparedWith.set(prepared, history.runs);
  return prepared;
}

/**
 * Tasks added at run time by an earlier run are added again before planning when the task that added
 * them completed with the same fingerprint (the same computation adds the same tasks), so that they
 * are planned like the others: up to date, or run. Walked in task order, added tasks included (they
 * may have added tasks too). The workflow is copied before the first addition (the caller's stays as
 * it was). Additions that no longer apply make their adding task run again (`addAgain`).
 */
function addRecorded(workflow: Workflow, fingerprints: string[], how: FingerprintInputs, history: JournalHistory, runs: string[]): { grown: Workflow; expansions: ExpansionRecord[]; addAgain: Set<string> } {
  const recorded = expansionsByFingerprint(runs);
  const expansions: ExpansionRecord[] = [];
  const addAgain = new Set<string>();
  if (recorded.size === 0) return { grown: workflow, expansions, addAgain };
  let grown = workflow;
  for (let t = 0; t < grown.tasks.length; t++) {
    const fp = fingerprints[t]!;
    const rec = recorded.get(fp);
    if (!rec || !history.completed.has(fp)) continue;
    if (grown === workflow) grown = copyWorkflow(workflow);
    let decls: TaskDecl[];
    try {
      decls = checkAddition(grown, t, rec.tasks);
    } catch {
      addAgain.add(fp);
      continue;
    }
    const from = grown.tasks.length;
    for (const u of applyAddition(grown, t, decls)) fingerprints[u] = fingerprintOf(grown, u, fingerprints, how);
    expansions.push({ seq: expansions.length, by: grown.tasks[t]!.id, byFingerprint: fp, tasks: decls, fingerprints: fingerprints.slice(from), before: true });
  }
  return { grown, expansions, addAgain };
}

/** What a run would do, task by task (tasks that run, then recreations), as `--dry-run` prints it. */
export interface PlannedTask {
  id: string;
  reason: string;
  recreate?: boolean;
}

/** Refines `changed` (no completion of the fingerprint): a new task, an edited one, a changed input, or a change upstream. */
/** The earlier runs a plan was compared with, for saying what changed when asked (reading every journal again costs seconds at a million tasks). */
const comparedWith = new WeakMap<PreparedRun, readonly string[]>();
const explained = new WeakMap<PreparedRun, Map<number, string>>();

/** What changed, in words, for tasks whose fingerprint no run completed (worked out on first use). */
function changesOf(prepared: PreparedRun): Map<number, string> {
  let text = explained.get(prepared);
  if (!text) {
    text = new Map();
    explained.set(prepared, text);
    const runs = comparedWith.get(prepared);
    if (runs) explainChanges(prepared, runs, text);
  }
  return text;
}

function explainChanges(prepared: PreparedRun, runs: readonly string[], text: Map<number, string>): void {
  const { workflow, plan } = prepared;
  const changed = [...plan.reason].filter(([, r]) => r.why === 'changed').map(([t]) => t);
  if (changed.length === 0) return;
  const last = lastCompletions(runs, new Set(changed.map((t) => workflow.tasks[t]!.id)));
  const runInputs = new Map<string, Record<string, FileStamp>>();
  const inputsOf = (run: string) => {
    let inputs = runInputs.get(run);
    if (!inputs) {
      try {
        inputs = readRunInfo(run).inputs;
      } catch {
        inputs = {};
      }
      runInputs.set(run, inputs);
    }
    return inputs;
  };
  for (const t of changed) {
    const task = workflow.tasks[t]!;
    const before = last.get(task.id);
    if (!before) {
      text.set(t, 'new task');
      continue;
    }
    if (before.recipe !== recipeHash(workflow, task, prepared.replay)) {
      text.set(t, 'its command, arguments or files changed');
      continue;
    }
    const parent = task.parents.find((p) => plan.runs[p] === 1);
    if (parent !== undefined) {
      text.set(t, `upstream task ${workflow.tasks[parent]!.id} changed`);
      continue;
    }
    const recorded = inputsOf(before.run);
    const input = task.inputs.find((f) => {
      const file = workflow.files[f]!;
      const was = recorded[file.name];
      const now = prepared.inputs.get(f);
      return file.producer < 0 && !file.marker && now !== undefined && (was === undefined || was.size !== now.size || was.mtimeNs !== now.mtimeNs);
    });
    text.set(t, input !== undefined ? `input ${workflow.files[input]!.name} changed` : 'no run recorded this computation (a setting such as the replay scale changed)');
  }
}

/** Why a task runs, in words. */
export function reasonText(prepared: PreparedRun, task: number): string {
  const { workflow, plan } = prepared;
  const r = plan.reason.get(task);
  if (!r) return 'up to date';
  const file = (f: number) => workflow.files[f]!.name;
  switch (r.why) {
    case 'fresh': return 'every task runs (--fresh)';
    case 'changed': return changesOf(prepared).get(task) ?? 'new task';
    case 'upstream': return `upstream task ${workflow.tasks[r.ref]!.id} runs`;
    case 'output': {
      const exists = statStamp(sharedPath(prepared.shared, file(r.ref))) !== undefined;
      return `output ${file(r.ref)} ${exists ? 'changed since it was written' : 'is missing'}`;
    }
    case 'recreate': {
      const reader = workflow.files[r.ref]!.consumers.find((c) => plan.runs[c] === 1 || plan.recreate.includes(c));
      return `recreates ${file(r.ref)} (kept by no earlier run) for task ${reader === undefined ? '?' : workflow.tasks[reader]!.id}`;
    }
  }
}

/** The tasks that run, in an order parents first, then the recreations: each with its reason. */
export function plannedTasks(prepared: PreparedRun): PlannedTask[] {
  const { workflow, plan } = prepared;
  const out: PlannedTask[] = [];
  for (const t of workflow.order) if (plan.runs[t] === 1) out.push({ id: workflow.tasks[t]!.id, reason: reasonText(prepared, t) });
  for (const t of plan.recreate) out.push({ id: workflow.tasks[t]!.id, reason: reasonText(prepared, t), recreate: true });
  return out;
}

/**
 * Content hashes of workflow inputs, remembered by path, size and mtime in `<state>/hashes.log`, so
 * that an unchanged input is not read again on the next run.
 */
class HashCache {
  private readonly known = new Map<string, string>();
  private readonly added: string[] = [];
  private readonly path: string;

  constructor(stateDir: string) {
    this.path = join(stateDir, 'hashes.log');
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      const [size, mtime, sha, name] = line.split(' ');
      if (name !== undefined) this.known.set(`${decodeURIComponent(name)}\u0000${size}\u0000${mtime}`, sha!);
    }
  }

  async hash(path: string, name: string, stamp: FileStamp): Promise<string> {
    const key = `${name}\u0000${stamp.size}\u0000${stamp.mtimeNs}`;
    let sha = this.known.get(key);
    if (sha === undefined) {
      sha = await sha256OfFile(path);
      this.known.set(key, sha);
      this.added.push(`${stamp.size} ${stamp.mtimeNs} ${sha} ${encodeURIComponent(name)}\n`);
    }
    return sha;
  }

  flush(): void {
    if (this.added.length === 0) return;
    mkdirSync(join(this.path, '..'), { recursive: true });
    appendFileSync(this.path, this.added.join(''));
  }
}

/** The last run recorded in a state directory, if any (for `status` and `statistics` given a shared directory). */
export function latestRun(stateDir: string): string | undefined {
  return runDirs(stateDir).at(-1);
}
