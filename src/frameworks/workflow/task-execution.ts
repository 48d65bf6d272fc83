/**
 * What running one task means on a member: its inputs are materialised (from the shared directory,
 * from this node's memory, or fetched peer to peer from the member holding them), it runs (a replay
 * or a function on a worker thread, a command as a child process in a working directory of its own),
 * and its outputs are stored: final outputs in the shared directory, intermediate files in memory
 * where they were produced (collocated), on a storage member (isolated), or in the shared directory
 * too (all-through-shared, the baseline). Bytes moved to and from shared storage and between peers
 * are counted. Intermediate files never go through the coordination service: the location service
 * already says which member holds a file, so a fetch is layer messages to that member and back.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskRef } from '../../runtime/worker/task.js';
import type { WorkerEvent, Workers } from '../../runtime/worker/worker-pool.js';
import { logName, runAttempt } from './command-run.js';
import { sha256Of, statStamp, type FileStamp } from './file-stamp.js';
import { logsDir } from './run-directory.js';
import type { FileLocation } from './location-shard.js';
import type { FunctionResult, ReplayJob, WorkerJob } from './replay-task.js';
import type { Workflow } from './workflow.js';
import { sharedName, sharedPath } from './shared-path.js';

export type StorageMode = 'collocated' | 'isolated' | 'shared';

// Sources run under tsx (.ts), the built package as JavaScript (.js).
/** The task type a worker thread runs a workflow task with (a replay, or a function task): this node's own copy. */
const REPLAY_TASK: TaskRef = { module: 'builtin:workflow-task', export: 'default' };

/** A location meaning "in the shared directory" (a holder that never leaves). */
export const SHARED_NODE = '*';

export interface ExecutionSettings {
  jobId: string;
  nodeId: string;
  shared: string;
  /** Replay every task at this scale (runtimes and sizes); undefined runs commands and functions. */
  replay?: number;
  storage: StorageMode;
  /** The run's directory: command tasks' stdout and stderr go to its `logs/`. */
  run?: string;
  /** Bytes kept of each of a command's stdout and stderr (default 1 MiB). */
  logBytes?: number;
  /** Seconds a command task may run unless it says otherwise. */
  taskTimeout?: number;
  /** Where command tasks' working directories are made (the site's local scratch; default the system's temporary directory). */
  scratch?: string;
}

/** Bytes kept of each of a command task's stdout and stderr in its log files. */
export const LOG_BYTES = 1 << 20;

/** A command that exited with an error (or was killed): its exit code, for the record of the attempt. */
export class CommandFailed extends Error {
  constructor(message: string, readonly exitCode: number | null) {
    super(message);
  }
}

export interface ExecutionCounters {
  bytesFromShared: number;
  bytesToShared: number;
  bytesPeer: number;
  filesPeer: number;
  /** Milliseconds per peer-to-peer fetch (samples). */
  transferMs: number[];
  /** Bytes command tasks wrote to stdout and stderr. */
  logBytes: number;
}

/**
 * Replays this short travel to a thread together (up to this many, this much recorded work): a
 * message per task would cost more than the task. Longer ones go one by one (a bundle's outputs
 * are reported when its last task ends).
 */
const BUNDLE_TASKS = 64;
const BUNDLE_SECONDS = 0.0005;

interface Waiting {
  job: WorkerJob;
  resolve: (out: Record<string, Uint8Array>) => void;
  reject: (err: Error) => void;
  /** Told when the job goes to a thread (to run now, or right after the one the thread runs). */
  started: (() => void) | undefined;
}

/** What a run of a task left: where its intermediate outputs are, and the files it wrote to the shared directory. */
export interface TaskOutcome {
  located: [number, FileLocation][];
  wrote: { name: string; stamp: FileStamp }[];
  /** Bytes read, by where they came from, and written (every output). */
  io: TaskBytes;
  /** Tasks it adds to the workflow (unchecked: workflow-growth.ts checks them). */
  added?: unknown[];
}

export interface TaskBytes {
  /** From the shared directory (or where the replica catalog put an input). */
  shared: number;
  /** Fetched from the member holding the file. */
  peer: number;
  /** Held here already. */
  local: number;
  out: number;
}

/** Thrown when an input's holder is gone: the task waits for the file again instead of failing. */
export class InputLost extends Error {
  /** The input that could not be had (its location is stale), if known. */
  constructor(message: string, readonly file?: number) {
    super(message);
  }
}

export { sharedPath };

export class TaskExecution {
  readonly counters: ExecutionCounters = { bytesFromShared: 0, bytesToShared: 0, bytesPeer: 0, filesPeer: 0, transferMs: [], logBytes: 0 };
  private readonly local = new Map<number, Uint8Array>();
  /** Thread task → the jobs it carries (one, or a bundle of short replays). */
  private readonly onSlot = new Map<string, Waiting[]>();
  private startScheduled = false;
  private seq = 0;
  private readonly waitingForThread: Waiting[] = [];

  constructor(
    private readonly workflow: Workflow,
    private readonly settings: ExecutionSettings,
    private readonly workers: Workers,
    /** Isolated storage: hand an intermediate file to a storage member, get its location back. */
    private readonly putRemote: (file: number, bytes: Uint8Array) => Promise<FileLocation>,
    /** An intermediate file from the member holding it (rejects with InputLost if it is gone). */
    private readonly fetchFrom: (node: string, file: number) => Promise<Uint8Array>,
  ) {}

  /**
   * Runs the task; resolves with the locations of its intermediate outputs (final ones are in the
   * shared directory). `started` is told when the task goes to a thread (or its process starts), its inputs here.
   */
  async run(task: number, inputs: [number, FileLocation | 'shared'][], started?: () => void, attempt = 1): Promise<TaskOutcome> {
    const spec = this.workflow.tasks[task]!;
    const wanted = inputs.filter(([f]) => !this.workflow.files[f]!.marker);
    const bytes = new Map<string, Uint8Array>();
    const io: TaskBytes = { shared: 0, peer: 0, local: 0, out: 0 };
    await Promise.all(wanted.map(async ([f, loc]) => {
      const [content, from] = await this.obtain(f, loc);
      io[from] += content.length;
      bytes.set(this.workflow.files[f]!.name, content);
    }));
    let outputs: Record<string, Uint8Array>;
    let added: unknown[] | undefined;
    const realOutputs = spec.outputs.filter((f) => !this.workflow.files[f]!.marker);
    if (this.settings.replay !== undefined) {
      const scale = this.settings.replay;
      outputs = await this.onWorker({ kind: 'replay', seconds: Math.max(0, spec.runtime) * scale, outputs: realOutputs.map((f) => ({ key: this.workflow.files[f]!.key, name: this.workflow.files[f]!.name, size: Math.round(this.workflow.files[f]!.size * scale) })) }, started);
    } else if (spec.fn) {
      const result = await this.onWorker({ kind: 'function', module: spec.fn.module, export: spec.fn.export, id: spec.id, args: spec.args ?? [], inputs: Object.fromEntries(bytes), outputs: realOutputs.map((f) => this.workflow.files[f]!.name) }, started) as unknown as FunctionResult;
      outputs = result.files;
      added = result.added;
    } else if (spec.command) {
      started?.();
      ({ outputs, added } = await this.runCommand(task, bytes, realOutputs.map((f) => this.workflow.files[f]!.name), attempt));
    } else throw new Error(`task ${spec.id} has neither a command nor a function: replay the workflow (--replay SCALE)`);
    const located: [number, FileLocation][] = [];
    const wrote: TaskOutcome['wrote'] = [];
    for (const f of realOutputs) {
      const file = this.workflow.files[f]!;
      const content = outputs[file.name]!;
      io.out += content.length;
      if (file.consumers.length === 0 || this.settings.storage === 'shared') {
        wrote.push({ name: sharedName(file), stamp: await this.writeShared(sharedName(file), content) });
        // Known to the location service even with no reader yet: a task added at run time may read it (replays add none).
        if (file.consumers.length > 0 || this.settings.replay === undefined) located.push([f, { node: SHARED_NODE }]);
      } else if (this.settings.storage === 'isolated') located.push([f, await this.putRemote(f, content)]);
      else {
        this.local.set(f, content);
        located.push([f, { node: this.settings.nodeId }]);
      }
    }
    return { located, wrote, io, ...(added !== undefined && added.length > 0 ? { added } : {}) };
  }

  private async obtain(f: number, loc: FileLocation | 'shared'): Promise<[Uint8Array, 'shared' | 'peer' | 'local']> {
    const file = this.workflow.files[f]!;
    if (loc === 'shared' || loc.node === SHARED_NODE) {
      const path = file.location ?? sharedPath(this.settings.shared, sharedName(file));
      const content = await readFile(path).catch((err: NodeJS.ErrnoException) => {
        throw new Error(`input ${sharedName(file)} is not at ${path} (${err.code ?? err.message})`);
      });
      this.counters.bytesFromShared += content.length;
      return [content, 'shared'];
    }
    if (loc.node === this.settings.nodeId && this.local.has(f)) return [this.local.get(f)!, 'local'];
    try {
      const t0 = performance.now();
      const content = await this.fetchFrom(loc.node, f);
      if (this.counters.transferMs.length < 10_000) this.counters.transferMs.push(performance.now() - t0);
      this.counters.bytesPeer += content.length;
      this.counters.filesPeer++;
      return [content, 'peer'];
    } catch (err) {
      throw new InputLost(`fetching ${file.name} from ${loc.node} failed: ${(err as Error).message}`, f);
    }
  }

  /** Writes a file to the shared directory; returns its stamp (with the content's hash) for the journal. */
  async writeShared(name: string, content: Uint8Array): Promise<FileStamp> {
    const path = sharedPath(this.settings.shared, name);
    await writeFile(path, content);
    this.counters.bytesToShared += content.length;
    const stamp = statStamp(path);
    if (!stamp) throw new Error(`${path} vanished right after it was written`);
    return { ...stamp, sha256: sha256Of(content) };
  }

  /** Bytes of an intermediate file this node holds (to serve a fetch, or to save it when the workflow stops). */
  held(f: number): Uint8Array | undefined {
    return this.local.get(f);
  }

  /** Isolated storage: this member keeps a file another member produced. */
  keep(f: number, content: Uint8Array): void {
    this.local.set(f, content);
  }

  /**
   * Runs on a worker thread: an idle one, or queued behind the task a thread runs (the pool starts
   * it the moment the first ends, so a thread never waits for a round trip to this thread); the rest
   * wait here. Jobs queued in the same turn leave together: short replays as one bundle per thread message.
   */
  private onWorker(job: WorkerJob, started: (() => void) | undefined): Promise<Record<string, Uint8Array>> {
    return new Promise((resolve, reject) => {
      this.waitingForThread.push({ job, resolve, reject, started });
      if (this.startScheduled) return;
      this.startScheduled = true;
      queueMicrotask(() => {
        this.startScheduled = false;
        this.startOnThreads();
      });
    });
  }

  private startOnThreads(): void {
    while (this.waitingForThread.length > 0) {
      const slot = this.workers.idleSlots()[0] ?? this.workers.pipelineSlots?.()[0];
      if (slot === undefined) return;
      const taken = this.nextBundle();
      const taskId = `wf-${this.settings.nodeId}-${this.seq++}`;
      this.onSlot.set(taskId, taken);
      for (const w of taken) w.started?.();
      const state: WorkerJob = taken.length === 1 ? taken[0]!.job : { kind: 'bundle', jobs: taken.map((w) => w.job as ReplayJob) };
      this.workers.run(slot, { taskId, jobId: this.settings.jobId, ref: REPLAY_TASK, state, partial: undefined, board: undefined, varNames: [] });
    }
  }

  /** The next job, with the short replays queued behind it (at most BUNDLE_TASKS, BUNDLE_SECONDS of work). */
  private nextBundle(): Waiting[] {
    const first = this.waitingForThread.shift()!;
    const taken = [first];
    if (first.job.kind !== 'replay') return taken;
    let seconds = first.job.seconds;
    for (;;) {
      const next = this.waitingForThread[0];
      if (!next || next.job.kind !== 'replay' || taken.length >= BUNDLE_TASKS || seconds + next.job.seconds > BUNDLE_SECONDS) return taken;
      seconds += next.job.seconds;
      taken.push(this.waitingForThread.shift()!);
    }
  }

  /** A worker thread reported on one of our tasks (or bundles). */
  onWorkerEvent(event: WorkerEvent): void {
    if (event.type !== 'done' && event.type !== 'failed' && event.type !== 'cancelled') return;
    const waiting = this.onSlot.get(event.taskId);
    if (!waiting) return;
    queueMicrotask(() => this.startOnThreads());
    this.onSlot.delete(event.taskId);
    if (event.type === 'done') {
      const outputs = waiting.length === 1 ? [event.partial] : (event.partial as unknown[]);
      waiting.forEach((w, i) => w.resolve((outputs[i] ?? {}) as Record<string, Uint8Array>));
    } else for (const w of waiting) w.reject(new Error(event.type === 'failed' ? event.error.split('\n')[0]! : 'cancelled'));
  }

  private async runCommand(task: number, inputs: Map<string, Uint8Array>, outputs: string[], attempt: number): Promise<{ outputs: Record<string, Uint8Array>; added?: unknown[] }> {
    const spec = this.workflow.tasks[task]!;
    const dir = join(this.settings.scratch ?? tmpdir(), 'tidepool-workflow', this.settings.jobId, this.settings.nodeId, `${task}`);
    await mkdir(dir, { recursive: true });
    try {
      for (const [name, content] of inputs) {
        await mkdir(join(dir, name, '..'), { recursive: true });
        await writeFile(join(dir, name), content);
      }
      const { program, args, stdin, stdout, stderr } = spec.command!;
      const { run } = this.settings;
      const timeout = spec.timeoutSeconds ?? this.settings.taskTimeout;
      const env: Record<string, string> = { ...process.env as Record<string, string>, TIDEPOOL_TASK: spec.id, TIDEPOOL_ATTEMPT: String(attempt), TIDEPOOL_NODE: this.settings.nodeId, TIDEPOOL_ADD_TASKS: join(dir, ADD_TASKS_FILE) };
      if (run !== undefined) env.TIDEPOOL_RUN = run;
      const outcome = await runAttempt({
        program, args, cwd: dir, env,
        ...(run !== undefined ? { logs: { dir: logsDir(run), name: logName(spec.id), attempt, capBytes: this.settings.logBytes ?? LOG_BYTES } } : {}),
        ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
        ...(stdin !== undefined ? { stdin } : {}), ...(stdout !== undefined ? { stdout } : {}), ...(stderr !== undefined ? { stderr } : {}),
      });
      this.counters.logBytes += outcome.bytesOut + outcome.bytesErr;
      if (outcome.timedOut || outcome.exitCode !== 0) {
        const how = outcome.timedOut ? `ran past its ${timeout} s timeout and was killed` : outcome.exitCode !== null ? `exited with code ${outcome.exitCode}` : `was killed by ${outcome.signal}`;
        const tail = outcome.stderrTail === '' ? '' : `; the end of its stderr (${outcome.stderrFile}): ${outcome.stderrTail}`;
        throw new CommandFailed(`${program} ${how}${tail}`, outcome.exitCode);
      }
      const out: Record<string, Uint8Array> = {};
      for (const name of outputs) {
        out[name] = await readFile(join(dir, name)).catch(() => {
          throw new Error(`${program} did not write its output ${name}`);
        });
      }
      return { outputs: out, ...(await addedByCommand(program, join(dir, ADD_TASKS_FILE))) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** Where a command task writes the tasks it adds (a JSON list; its path is in `TIDEPOOL_ADD_TASKS`). */
const ADD_TASKS_FILE = '.tidepool-add-tasks.json';

/** The tasks a command wrote to its `TIDEPOOL_ADD_TASKS` file, if it wrote one; a file that is not a JSON list fails the attempt. */
async function addedByCommand(program: string, path: string): Promise<{ added?: unknown[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  let added: unknown;
  try {
    added = JSON.parse(text);
  } catch (err) {
    throw new Error(`${program} wrote tasks to add ($TIDEPOOL_ADD_TASKS) that are not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(added)) throw new Error(`${program} wrote tasks to add ($TIDEPOOL_ADD_TASKS) that are not a JSON list`);
  return { added };
}
