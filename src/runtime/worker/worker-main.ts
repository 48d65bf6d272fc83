/**
 * The worker thread: loads task types by module specifier (cached), runs one task at a time,
 * and reports children, completion, migration and variable updates to the node.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTaskType, type TaskRef, type TaskType } from '../task.js';
import { ControlFlags } from './control-flags.js';
import type { FromWorker, ToWorker } from './messages.js';
import { runTask } from './task-runner.js';

const port = parentPort!;
const { controlBuffer, slot } = workerData as { controlBuffer: SharedArrayBuffer; slot: number };
const flags = ControlFlags.forWorker(controlBuffer, slot);
const types = new Map<string, Promise<TaskType<unknown, unknown>>>();
/** Job inputs this worker holds (the node sends each once); the last few jobs are kept. */
const inputs = new Map<string, unknown>();
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
  const req = msg.run;
  if (req.input) {
    inputs.set(req.jobId, req.input.value);
    if (inputs.size > 4) inputs.delete(inputs.keys().next().value!);
  }
  typeOf(req.ref).then(
    (type) => runTask(type, req, flags, post, inputs.get(req.jobId)),
    (err: unknown) => post({ type: 'failed', taskId: req.taskId, error: err instanceof Error ? err.message : String(err) }),
  ).catch((err: unknown) => post({ type: 'failed', taskId: req.taskId, error: String(err) }));
});

post({ type: 'ready' });
