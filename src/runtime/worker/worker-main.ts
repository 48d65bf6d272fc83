/**
 * The worker thread: loads task types by module specifier (cached), runs one task at a time,
 * and reports children, completion, migration and variable updates to the node.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTaskType, type TaskRef, type TaskType } from '../task.js';
import { ControlFlags } from './control-flags.js';
import { JOB_SETUPS_KEPT, type FromWorker, type JobSetup, type RunRequest, type ToWorker } from './messages.js';
import { runTask } from './task-runner.js';

const port = parentPort!;
const { controlBuffer, slot } = workerData as { controlBuffer: SharedArrayBuffer; slot: number };
const flags = ControlFlags.forWorker(controlBuffer, slot);
const types = new Map<string, Promise<TaskType<unknown, unknown>>>();
/** Setups of the jobs this worker runs tasks of (the node sends each once); the last few are kept. */
const jobs = new Map<string, JobSetup>();
const post = (m: FromWorker) => port.postMessage(m);

function typeOf(ref: TaskRef): Promise<TaskType<unknown, unknown>> {
  const key = `${ref.module}#${ref.export}`;
  let type = types.get(key);
  if (!type) {
    type = loadTaskType(ref);
    types.set(key, type);
  }
  return type;
}

port.on('message', (msg: ToWorker) => {
  if (msg.type === 'shutdown') {
    port.close();
    return;
  }
  if (msg.type === 'job') {
    jobs.set(msg.job.jobId, msg.job);
    if (jobs.size > JOB_SETUPS_KEPT) jobs.delete(jobs.keys().next().value!);
    return;
  }
  const job = jobs.get(msg.run.jobId);
  if (!job) {
    post({ type: 'failed', taskId: msg.run.taskId, error: `worker has no setup for job ${msg.run.jobId}` });
    return;
  }
  const req: RunRequest = { ...msg.run, ref: job.ref, board: job.board, varNames: job.varNames };
  typeOf(req.ref).then(
    (type) => runTask(type, req, flags, post, job.input?.value),
    (err: unknown) => post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? err.message : String(err) }),
  ).catch((err: unknown) => post({ type: 'failed', taskId: req.taskId, error: String(err) }));
});

post({ type: 'ready' });
