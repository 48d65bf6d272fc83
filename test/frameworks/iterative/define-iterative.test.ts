/**
 * An iterative task obeys the thread level's assignment from its slot's budget word (shared memory,
 * no message): between blocks it cuts its range where the budget says and pools the rest; a budget
 * meant for the slot's previous task is ignored; reading the same word again cuts nothing more.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineIterative } from '../../../src/frameworks/iterative/define-iterative.js';
import { iterativeInput } from '../../../src/frameworks/iterative/run-iterative.js';
import type { BlockRange, BlockTally, IterativeInput } from '../../../src/frameworks/iterative/iterative-types.js';
import type { TaskContext } from '../../../src/runtime/worker/task.js';

const counting = defineIterative<number>({
  name: 'counting',
  iterate: (_first, count, tally) => tally + count,
  result: { initial: () => 0, combine: (a, b) => a + b },
});

/**
 * Runs one task over `range` (blocks of 10 iterations); `budgetAt(progress)` is what the node has
 * written to the budget word by then, `receiveAt(progress)` the messages the task finds then.
 */
function runTask(range: BlockRange, budgetAt: (progress: number) => number | undefined, receiveAt: (progress: number) => unknown[] = () => []) {
  const input = iterativeInput({ iterations: 1000, blockSize: 10, chunkSize: 10, balance: 'ruper' }) as IterativeInput<undefined>;
  let progress = 0;
  const emitted: number[] = [];
  const spawned: Array<{ state: unknown; on?: string }> = [];
  const sent: unknown[] = [];
  const ctx = {
    taskId: 't', jobId: 'j', input,
    potentialSplit: () => false, shouldMigrate: () => false, cancelled: () => false,
    spawn: (state: unknown, options?: { on?: string }) => void spawned.push({ state, ...(options?.on ? { on: options.on } : {}) }),
    emit: (_v: BlockTally<number>, key?: number | string) => void emitted.push(key as number),
    progress: (n = 1) => void (progress += n),
    budget: () => budgetAt(progress),
    checkpoint: () => undefined,
    send: (body: unknown) => void sent.push(body),
    receive: () => receiveAt(progress),
    getVar: () => undefined, setVar: () => undefined,
  } as unknown as TaskContext<BlockTally<number>, IterativeInput<undefined>>;
  const state = { ...range };
  void counting.run(state, ctx);
  return { state, emitted, spawned, sent };
}

test('a budget written mid-run: the range stops at its block, the rest goes to the pool as one task, once', () => {
  // The node's checkpoint writes "keep up to block 6" once the task has run 3 blocks.
  const r = runTask({ lo: 0, hi: 10 }, (progress) => (progress >= 30 ? 6 : undefined));
  assert.deepEqual(r.emitted, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(r.spawned, [{ state: { lo: 6, hi: 10 } }], 'pooled on this node (no placement), cut once');
  assert.deepEqual(r.sent, [
    { type: 'it-range', lo: 0, hi: 10 },
    { type: 'it-shed', lo: 6, hi: 10 },
    { type: 'it-range', lo: 3, hi: 6 },
  ]);
});

test('a budget below the range\'s first block was meant for the slot\'s previous task: ignored', () => {
  const r = runTask({ lo: 20, hi: 25 }, () => 12);
  assert.deepEqual(r.emitted, [20, 21, 22, 23, 24]);
  assert.deepEqual(r.spawned, []);
});

test('a thread behind its assignment (budget at its next block): everything it has not started goes to the pool', () => {
  const r = runTask({ lo: 4, hi: 9 }, (progress) => (progress >= 10 ? 5 : undefined));
  assert.deepEqual(r.emitted, [4]);
  assert.deepEqual(r.spawned, [{ state: { lo: 5, hi: 9 } }]);
  assert.deepEqual(r.state, { lo: 5, hi: 5 });
});

test('a process-level order (it-shed to a node) between blocks: the blocks it names are spawned placed on that node, once', () => {
  // The order arrives after two blocks; a malformed one and one without a destination are ignored.
  const r = runTask({ lo: 0, hi: 10 }, () => undefined, (progress) => (progress === 20
    ? [{ type: 'it-shed', iterations: 35, to: 'node-b' }, { type: 'it-shed', iterations: 'x', to: 'node-b' }, { type: 'it-shed', iterations: 10 }]
    : []));
  // 35 iterations are 3.5 blocks: rounded to 4, the last four blocks, placed on node-b.
  assert.deepEqual(r.spawned, [{ state: { lo: 6, hi: 10 }, on: 'node-b' }]);
  assert.deepEqual(r.emitted, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(r.sent, [{ type: 'it-range', lo: 0, hi: 10 }, { type: 'it-shed', lo: 6, hi: 10, to: 'node-b' }, { type: 'it-range', lo: 2, hi: 6 }]);
});
