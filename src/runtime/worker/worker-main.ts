/**
 * The worker thread: loads task types by module specifier (cached), runs one task at a time,
 * and reports children, completion, migration and variable updates to the node.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { decode } from '../../util/codec.js';
import { loadTaskType, type TaskRef, type TaskType } from './task.js';
import type { TaskRecord } from './task-record.js';
import { CANCEL, MIGRATE, WANT_SPLIT, ControlFlags } from './control-flags.js';
import { JOB_SETUPS_KEPT, type AttachFailed, type DoneColumns, type FromWorker, type InlineRuns, type JobSetup, type RunRequest, type TaskMessage, type ToWorker, type WorkerPost } from './messages.js';
import { runTask } from './task-runner.js';

const port = parentPort!;
const { controlBuffer, slot } = workerData as { controlBuffer: SharedArrayBuffer; slot: number };
const flags = ControlFlags.forWorker(controlBuffer, slot);
const types = new Map<string, Promise<TaskType<unknown, unknown>>>();
/** Setups of the jobs this worker runs tasks of (the node sends each once); the last few are kept. */
const jobs = new Map<string, JobSetup>();
/**
 * Completions of a dispatch's tasks but its last wait here and go to the node together (one message,
 * not one per task); anything else goes at once, after them, so the node sees every report in order.
 */
let outbox: FromWorker[] = [];
const OUTBOX_MAX = 64;
/** The running task has another task of its dispatch behind it. */
let moreBehind = false;

function flushOutbox(): void {
  if (outbox.length === 0) return;
  const m: WorkerPost = outbox.length === 1 ? outbox[0]! : doneColumns(outbox) ?? { type: 'batch', events: outbox };
  outbox = [];
  port.postMessage(m);
}

/** Completions without children as columns (the common batch), or undefined when one is not that plain. */
function doneColumns(events: FromWorker[]): DoneColumns | undefined {
  const taskIds: string[] = [];
  const partials: unknown[] = [];
  const ms: number[] = [];
  let inline: Array<InlineRuns | undefined> | undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.type !== 'done' || e.children !== undefined || e.encodedChildren !== undefined || e.ms === undefined) return undefined;
    taskIds.push(e.taskId);
    partials.push(e.partial);
    ms.push(e.ms);
    if (e.inline) (inline ??= new Array<InlineRuns | undefined>(events.length).fill(undefined))[i] = e.inline;
  }
  return { type: 'dones', taskIds, partials, ms, ...(inline ? { inline } : {}) };
}

const post = (m: FromWorker) => {
  if (m.type === 'done' && (moreBehind || outbox.length > 0)) {
    outbox.push(m);
    if (!moreBehind || outbox.length >= OUTBOX_MAX) flushOutbox();
    return;
  }
  flushOutbox();
  port.postMessage(m);
};

function typeOf(ref: TaskRef): Promise<TaskType<unknown, unknown>> {
  const key = `${ref.module}#${ref.export}`;
  let type = types.get(key);
  if (!type) {
    type = loadTaskType(ref);
    types.set(key, type);
  }
  return type;
}

/** A shared input becomes the value tasks see: binary as a Buffer over the shared bytes, structured decoded once here. */
function withInput(job: JobSetup): JobSetup {
  const input = job.input;
  if (!input || !('shared' in input)) return job;
  const { shared, form } = input;
  // Structured input is decoded from a private copy: msgpackr's native string decoder crashed the
  // process (SIGSEGV) on SharedArrayBuffer-backed bytes in a worker. The decoded value is per worker anyway.
  const value = form === 'bytes' ? Buffer.from(shared.buffer, shared.byteOffset, shared.byteLength) : decode(new Uint8Array(shared));
  return { ...job, input: { value } };
}

/** Tasks received and not yet finished, in order: one runs at a time (pipelined ones wait here). */
const queue: TaskMessage[] = [];
const dropped = new Set<string>();
/** Application messages from the node for the running task (TaskContext.receive). */
let inbox: unknown[] = [];
let running = false;

port.on('message', (msg: ToWorker) => receive(msg));

function receive(msg: ToWorker): void {
  switch (msg.type) {
    case 'shutdown':
      port.close();
      return;
    case 'job':
      jobs.delete(msg.job.jobId); // a new setup for a job rejoined replaces the old one, and is the newest
      jobs.set(msg.job.jobId, withInput(msg.job));
      if (jobs.size > JOB_SETUPS_KEPT) jobs.delete(jobs.keys().next().value!);
      return;
    case 'drop':
      dropped.add(msg.taskId);
      return;
    case 'app':
      inbox.push(msg.body);
      return;
    case 'attach':
      void attach(msg.module, msg.export, msg.port, msg.data);
      return;
    case 'ping':
      port.postMessage({ type: 'pong' } satisfies WorkerPost);
      return;
    case 'runs': {
      const { jobId, ids, states, partials, encoded, pipelined } = msg.runs;
      // Every task of a dispatch but the first starts behind another, as a pipelined one does.
      for (let i = 0; i < ids.length; i++) {
        const behind = pipelined || i > 0;
        const b = encoded ? encoded.spans[3 * i]! : -1;
        const record = b >= 0 ? new Uint8Array(encoded!.buffers[b]!, encoded!.spans[3 * i + 1], encoded!.spans[3 * i + 2]) : undefined;
        queue.push({
          taskId: ids[i]!, jobId, state: states[i], partial: partials?.[i], ...(record ? { encoded: record } : {}),
          ...(behind ? { pipelined: true } : {}), ...(i < ids.length - 1 ? { more: true } : {}),
        });
      }
      if (!running) void drainQueue();
    }
  }
}

/** Starts a resident (Workers.attach): it lives on this thread's event loop, beside the task runner, until its port closes. */
async function attach(module: string, name: string, port: MessagePort, data: unknown): Promise<void> {
  try {
    const entry = ((await import(module)) as Record<string, unknown>)[name];
    if (typeof entry !== 'function') throw new Error(`${module} has no function export "${name}"`);
    await (entry as (port: MessagePort, data: unknown) => unknown)(port, data);
  } catch (err) {
    port.postMessage({ type: 'attach-failed', error: err instanceof Error ? err.message : String(err) } satisfies AttachFailed);
    port.close();
  }
}

async function drainQueue(): Promise<void> {
  running = true;
  try {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      moreBehind = next.more === true;
      await runOne(next);
    }
  } finally {
    moreBehind = false;
    flushOutbox();
    running = false;
  }
}

/** Takes in whatever the node sent, without returning to the event loop (a running task may never yield). */
function pumpPort(): void {
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) receive(m.message as ToWorker);
}

function takeInbox(): unknown[] {
  pumpPort();
  const out = inbox;
  inbox = [];
  return out;
}

async function runOne(task: TaskMessage): Promise<void> {
  if (dropped.delete(task.taskId)) return post({ type: 'cancelled', taskId: task.taskId });
  if (task.pipelined) {
    // Tasks run back to back without returning to the event loop: take in what the node sent meanwhile
    // (a drop for this very task, say) before starting it.
    pumpPort();
    if (dropped.delete(task.taskId)) return post({ type: 'cancelled', taskId: task.taskId });
    // The control word may still hold requests for the task before this one (see TaskMessage).
    Atomics.store(flags.view, WANT_SPLIT, 0);
    if (Atomics.load(flags.view, MIGRATE) !== 0 || Atomics.load(flags.view, CANCEL) !== 0) {
      return post({ type: 'migrated', taskId: task.taskId, state: task.state, partial: task.partial });
    }
  }
  const job = jobs.get(task.jobId);
  if (!job) return post({ type: 'failed', taskId: task.taskId, error: `worker has no setup for job ${task.jobId}` });
  // A state that came as its encoded record is decoded here, on the worker (the node never decoded it).
  const state = task.encoded ? decode<TaskRecord>(task.encoded).state : task.state;
  const req: RunRequest = {
    taskId: task.taskId, jobId: task.jobId, state, partial: task.partial, ref: job.ref, board: job.board, varNames: job.varNames,
    ...(job.owner !== undefined ? { owner: job.owner } : {}), ...(job.spawnWindow !== undefined ? { spawnWindow: job.spawnWindow } : {}),
  };
  try {
    await runTask(await typeOf(req.ref), req, flags, post, job.input && 'value' in job.input ? job.input.value : undefined, takeInbox);
  } catch (err) {
    post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? err.message : String(err) });
  }
}

post({ type: 'ready' });
