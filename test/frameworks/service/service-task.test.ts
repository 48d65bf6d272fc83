// The batch task type on a worker: its range offers a real split point before each chunk of tasks,
// although the runtime consults its control words only on every CONTROL_CHECK_EVERY-th split point, so that
// an idle worker gets half of a batch before the first (possibly long) task runs rather than after many chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Capture } from '../../../src/frameworks/service/capture.js';
import serviceBatchTask, { unpackOutcomes, type BatchInput, type OutcomeChunk } from '../../../src/frameworks/service/service-task.js';
import { CONTROL_CHECK_EVERY, type TaskContext } from '../../../src/runtime/task.js';
import type { TaskOutcome } from '../../../src/frameworks/service/graph-format.js';

test('the range splits at its first chunk boundary when work is wanted, with the runtime’s every-CONTROL_CHECK_EVERY-th check', async () => {
  const cap = new Capture();
  for (let i = 0; i < 4; i++) cap.addTask(() => i * i);
  cap.done();
  const range = { lo: 0, hi: 4 };
  const events: string[] = [];
  const chunks: OutcomeChunk[] = [];
  let tick = 0;
  let wanted = true; // an idle worker asks for work from the start
  const ctx = {
    jobId: 'service-task-split-test',
    input: { graph: JSON.stringify(cap.graph) },
    cancelled: () => false,
    shouldMigrate: () => false,
    // As the worker's RunContext: the control words are read on every CONTROL_CHECK_EVERY-th call only.
    potentialSplit: () => {
      if (++tick % CONTROL_CHECK_EVERY !== 0 || !wanted) return false;
      wanted = false;
      const child = serviceBatchTask.split!(range);
      events.push(`split off ${child!.lo}..${child!.hi}`);
      return true;
    },
    emit: (value: OutcomeChunk[], key?: number | string) => {
      chunks.push(...value);
      events.push(`emit from ${key}`);
    },
  } as unknown as TaskContext<OutcomeChunk[], BatchInput>;
  await serviceBatchTask.run(range, ctx);
  assert.equal(events[0], 'split off 2..4', `the split came before the first chunk ran: ${events.join(', ')}`);
  assert.deepEqual(range, { lo: 2, hi: 2 });
  const outcomes = unpackOutcomes(chunks, 4);
  assert.deepEqual(Array.from(outcomes, (o) => (o === undefined ? undefined : (JSON.parse(o) as TaskOutcome).v)), [0, 1, undefined, undefined]);
});

test('a chunk is sent while the one before runs; a split then gives away only indexes not sent, so each task is emitted once or split off', async () => {
  const n = 20;
  const cap = new Capture();
  for (let i = 0; i < n; i++) cap.addTask(() => i + 1);
  cap.done();
  const range = { lo: 0, hi: n };
  const splitOff: { lo: number; hi: number }[] = [];
  const chunks: OutcomeChunk[] = [];
  let tick = 0;
  let splitting = false;
  const ctx = {
    jobId: 'service-task-pipeline-test',
    input: { graph: JSON.stringify(cap.graph) },
    cancelled: () => false,
    shouldMigrate: () => false,
    // From the fourth chunk boundary on, a split at every one: the range halves while chunks of tiny tasks double.
    potentialSplit: () => {
      if (!splitting || ++tick % 16 !== 0 || tick < 64) return false;
      const child = serviceBatchTask.split!(range);
      if (child) splitOff.push(child);
      return child !== undefined;
    },
    emit: (value: OutcomeChunk[]) => chunks.push(...value),
  } as unknown as TaskContext<OutcomeChunk[], BatchInput>;
  await serviceBatchTask.run({ lo: 0, hi: 1 }, ctx); // the sandbox loads the batch: chunk times are then tasks alone
  chunks.length = 0;
  splitting = true;
  await serviceBatchTask.run(range, ctx);
  const outcomes = unpackOutcomes(chunks, n);
  const owners = Array.from({ length: n }, (_, i) => (outcomes[i] !== undefined ? 1 : 0) + splitOff.filter((r) => r.lo <= i && i < r.hi).length);
  assert.deepEqual(owners, new Array(n).fill(1), 'every index emitted here or split off, never both');
  assert.ok(splitOff.length >= 2, `${splitOff.length} splits`);
  assert.deepEqual(range, { lo: range.hi, hi: range.hi });
  for (let i = 0; i < n; i++) if (outcomes[i] !== undefined) assert.equal((JSON.parse(outcomes[i]!) as TaskOutcome).v, i + 1);
});
