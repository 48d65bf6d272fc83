/**
 * Several tasks in one iterative job (RUPER-LB Fig. 1: a process with several tasks; PenRed runs one
 * per particle source): each task has its own iteration count, parameters and tally, its iterations
 * count from 0 and draw streams no other task draws; the tasks are consecutive segments of the job's
 * iterations, so a block may end one task and start the next, and the balancers move iterations of
 * any task. Every strategy gives each task's sequential tally bit for bit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../../../src/index.js';
import { iterateSequentially, iterativeInput, runIterative, type IterativeOptions } from '../../../src/frameworks/iterative/run-iterative.js';
import { defineIterative } from '../../../src/frameworks/iterative/define-iterative.js';
import { withDeadline } from '../../support/wait.js';
import checksum, { type Checksum } from './apps/checksum.js';

const APP = { module: new URL('./apps/checksum.ts', import.meta.url).href, export: 'default' };
// Three sources of different cost and size; 3,050 is not a multiple of the block size, so block 15 holds the end of the first task and the start of the second.
const OPTS: IterativeOptions<{ work: number }> = {
  tasks: [{ name: 'cheap', iterations: 3050, params: { work: 1 } }, { name: 'costly', iterations: 5000, params: { work: 12 } }, { iterations: 2450 }],
  params: { work: 4 }, blockSize: 200, chunkSize: 64, ruper: { checkpointInterval: 0.1, minRemaining: 0.02 },
};

test('each task counts its own iterations from 0 with its own parameters, and draws streams of its own', () => {
  const seen: Array<{ task: string; first: number; count: number; work: number }> = [];
  const probe = defineIterative<number, { work: number }>({
    name: 'probe',
    iterate(first, count, t, ctx) {
      seen.push({ task: `${ctx.task.index}:${ctx.task.name}`, first, count, work: ctx.params.work });
      return t + ctx.random(first).nextUint32();
    },
    result: { initial: () => 0, combine: (a, b) => a + b },
  });
  const r = iterateSequentially(probe, { ...OPTS, blockSize: 1000, chunkSize: 1000 });
  // Blocks of 1000: block 3 holds cheap 3000-3049 and costly 0-949, block 8 costly 4950-4999 and task 3 0-949.
  assert.deepEqual(seen.filter((x) => x.first + x.count === 3050 || x.first === 0), [
    { task: '0:cheap', first: 0, count: 1000, work: 1 },
    { task: '0:cheap', first: 3000, count: 50, work: 1 },
    { task: '1:costly', first: 0, count: 950, work: 12 },
    { task: '2:task 3', first: 0, count: 950, work: 4 },
  ], 'local indices, a task\'s own parameters, the job\'s params for a task without');
  assert.deepEqual(r.tasks!.map((t) => [t.name, t.iterations]), [['cheap', 3050], ['costly', 5000], ['task 3', 2450]]);
  assert.equal(r.iterations, 10_500);
  assert.equal(r.value, r.tasks!.reduce((a, t) => a + t.value, 0), 'value: the tasks combined');
  // Same parameters and size, other tasks: other streams (iteration i of a task is the job's iteration first + i).
  const twins = iterateSequentially(probe, { tasks: [{ iterations: 500, params: { work: 1 } }, { iterations: 500, params: { work: 1 } }] });
  assert.notEqual(twins.tasks![0]!.value, twins.tasks![1]!.value);
});

test('several tasks on 2 nodes: every strategy gives each task\'s sequential tally bit for bit, every iteration once', { timeout: 180_000 }, async () => {
  const reference = iterateSequentially(checksum, OPTS);
  const cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 0 });
  try {
    for (const balance of ['ruper', 'steal', 'static'] as const) {
      const r = await withDeadline(runIterative<Checksum, { work: number }>(cluster, APP, { ...OPTS, balance, nodes: 2 }), `${balance} with three tasks`, 90_000);
      assert.equal(r.iterations, 10_500);
      for (const [k, t] of r.tasks!.entries()) {
        const n = OPTS.tasks![k]!.iterations;
        assert.equal(t.value.count, n, `${balance}, ${t.name}: every iteration counted once`);
        assert.equal(t.value.indexSum, (n * (n - 1)) / 2, `${balance}, ${t.name}: its iterations count from 0`);
      }
      assert.deepEqual(r.tasks, reference.tasks, `${balance}: each task bit-identical to the sequential fold`);
      assert.deepEqual(r.value, reference.value);
    }
  } finally {
    await cluster.close();
  }
});

test('a bad task is named by its position; iterations must be their sum', () => {
  assert.throws(() => iterativeInput({ tasks: [] }), /tasks must be a non-empty array/);
  assert.throws(() => iterativeInput({ tasks: [{ iterations: 10 }, { iterations: 0 }] }), /tasks\[1\]\.iterations must be a whole number ≥ 1, got 0/);
  assert.throws(() => iterativeInput({ tasks: [{ iterations: 10, name: '' }] }), /tasks\[0\]\.name must be a non-empty string/);
  assert.throws(() => iterativeInput({ iterations: 25, tasks: [{ iterations: 10 }, { iterations: 10 }] }), /iterations \(25\) is not the sum of the tasks' iterations \(20\)/);
  assert.equal(iterativeInput({ iterations: 20, tasks: [{ iterations: 10 }, { iterations: 10 }] }).tasks![1]!.first, 10);
});
