// The service job's task type on a worker, with a stand-in for its node's kind: a range offers a real
// split point before each chunk (the runtime consults its control words only on every
// CONTROL_CHECK_EVERY-th split point), gives away only indexes not sent, and — while a long task runs —
// even its last one; the feeder takes the batches it hears of in order, spawns those heard while it runs
// one, and hands over to a successor once idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Capture } from '../../../src/frameworks/service/capture.js';
import serviceTask, { type KindToWorker, type ServiceTaskState, type TaskToKind } from '../../../src/frameworks/service/service-task.js';
import { unpackChunk } from '../../../src/frameworks/service/outcome-chunks.js';
import { CONTROL_CHECK_EVERY, type TaskContext } from '../../../src/runtime/worker/task.js';
import type { TaskOutcome } from '../../../src/frameworks/service/graph-format.js';

let batches = 0;

/** A batch of these closures as the kind would load it on a worker. */
function batchOf(fns: (() => unknown)[]): { id: string; load: KindToWorker } {
  const cap = new Capture();
  fns.forEach((f) => cap.addTask(f));
  cap.done();
  const id = `b${String(++batches).padStart(10, '0')}-${process.pid}`;
  return { id, load: { type: 'load', id, graph: JSON.stringify(cap.graph), limits: { timeoutMs: 60_000, memoryMb: 128 }, blobs: [] } };
}

/** A task context standing in for the runtime and the node's kind: answers `need` with the batch, records outcomes and spawns. */
function context(loads: KindToWorker[], potentialSplit: () => boolean = () => false) {
  const inbox: KindToWorker[] = [];
  const outcomes = new Map<number, TaskOutcome>();
  const sent: TaskToKind[] = [];
  const spawned: ServiceTaskState[] = [];
  const ctx = {
    jobId: 'service-task-test',
    input: undefined,
    cancelled: () => false,
    shouldMigrate: () => false,
    potentialSplit,
    receive: () => inbox.splice(0),
    send: (body: TaskToKind) => {
      sent.push(body);
      if (body.type === 'need') inbox.push(...loads.filter((l) => l.type === 'load' && l.id === body.id));
      if (body.type === 'outcomes') for (const [i, o] of unpackChunk(body.chunk.z, 1_000)) outcomes.set(i, JSON.parse(o) as TaskOutcome);
    },
    spawn: (state: ServiceTaskState) => spawned.push(state),
  } as unknown as TaskContext<never, unknown>;
  return { ctx, inbox, outcomes, sent, spawned };
}

test('a range splits at its first chunk boundary when work is wanted, with the runtime’s every-CONTROL_CHECK_EVERY-th check', async () => {
  const { id, load } = batchOf([0, 1, 2, 3].map((i) => () => i * i));
  const range: ServiceTaskState = { t: 'range', id, lo: 0, hi: 4 };
  const events: string[] = [];
  let tick = 0;
  let wanted = true; // an idle worker asks for work from the start
  const { ctx, outcomes } = context([load], () => {
    if (++tick % CONTROL_CHECK_EVERY !== 0 || !wanted) return false;
    wanted = false;
    const child = serviceTask.split!(range) as { lo: number; hi: number };
    events.push(`split off ${child.lo}..${child.hi}`);
    return true;
  });
  await serviceTask.run(range, ctx);
  assert.equal(events[0], 'split off 2..4', `the split came before the first chunk ran: ${events.join(', ')}`);
  assert.deepEqual(range, { t: 'range', id, lo: 2, hi: 2 });
  assert.deepEqual([...outcomes].sort(([a], [b]) => a - b).map(([i, o]) => [i, o.v]), [[0, 0], [1, 1]]);
});

test('a chunk is sent while the one before runs; a split then gives away only indexes not sent, so each task is reported once or split off', async () => {
  const n = 20;
  const { id, load } = batchOf(Array.from({ length: n }, (_, i) => () => i + 1));
  const range: ServiceTaskState = { t: 'range', id, lo: 0, hi: n };
  const splitOff: { lo: number; hi: number }[] = [];
  let tick = 0;
  let splitting = false;
  const { ctx, outcomes } = context([load], () => {
    // From the fourth chunk boundary on, a split at every one: the range halves while chunks of tiny tasks double.
    if (!splitting || ++tick % 16 !== 0 || tick < 64) return false;
    const child = serviceTask.split!(range) as { lo: number; hi: number } | undefined;
    if (child) splitOff.push(child);
    return child !== undefined;
  });
  await serviceTask.run({ t: 'range', id, lo: 0, hi: 1 }, ctx); // the sandbox loads the batch: chunk times are then tasks alone
  outcomes.clear();
  splitting = true;
  await serviceTask.run(range, ctx);
  const owners = Array.from({ length: n }, (_, i) => (outcomes.has(i) ? 1 : 0) + splitOff.filter((r) => r.lo <= i && i < r.hi).length);
  assert.deepEqual(owners, new Array(n).fill(1), 'every index reported here or split off, never both');
  assert.ok(splitOff.length >= 2, `${splitOff.length} splits`);
  for (const [i, o] of outcomes) assert.equal(o.v, i + 1);
});

test('while a long task runs, the range gives away even its last index not sent', async () => {
  const spin = () => { const end = Date.now() + 400; let x = 0; while (Date.now() < end) x++; return x > 0; };
  const { id, load } = batchOf([spin, () => 'quick']);
  const range: ServiceTaskState = { t: 'range', id, lo: 0, hi: 2 };
  let splitOff: { lo: number; hi: number } | undefined;
  let tick = 0;
  const { ctx, outcomes } = context([load], () => {
    // Work is wanted once the first chunk (the long task alone) is under way.
    if (++tick % CONTROL_CHECK_EVERY !== 0 || splitOff || (range as { lo: number }).lo !== 0 || tick <= CONTROL_CHECK_EVERY) return false;
    splitOff = serviceTask.split!(range) as { lo: number; hi: number } | undefined;
    return splitOff !== undefined;
  });
  await serviceTask.run(range, ctx);
  assert.deepEqual(splitOff && { lo: splitOff.lo, hi: splitOff.hi }, { lo: 1, hi: 2 }, 'the quick task went to another worker');
  assert.deepEqual([...outcomes.keys()], [0]);
});

test('the feeder takes batches in order, spawns one heard of while it runs another, and hands over once idle', async () => {
  const first = batchOf([() => 1, () => 2]);
  const second = batchOf([() => 3]);
  const { ctx, inbox, sent, spawned, outcomes } = context([first.load, second.load]);
  inbox.push({ type: 'batch', id: second.id, tasks: 1 }, { type: 'batch', id: first.id, tasks: 2 });
  const feeder: ServiceTaskState = { t: 'feeder', seq: '' };
  await serviceTask.run(feeder, ctx);
  assert.deepEqual(sent[0], { type: 'feeder', seq: '' }, 'the feeder tells its node it runs here');
  assert.deepEqual([...outcomes.keys()].sort(), [0, 1], 'it ran the first batch itself');
  assert.deepEqual(spawned, [{ t: 'range', id: second.id, lo: 0, hi: 1 }, { t: 'feeder', seq: second.id, wait: 100 }],
    'the second batch, heard of meanwhile, became a task of its own; then a successor took over');
  // An idle feeder hands over after its wait, doubling it.
  const idle = context([]);
  await serviceTask.run({ t: 'feeder', seq: second.id, wait: 20 }, idle.ctx);
  assert.deepEqual(idle.spawned, [{ t: 'feeder', seq: second.id, wait: 40 }]);
});
