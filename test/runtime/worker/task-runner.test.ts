/**
 * The task context on the current thread (runTask): split requests, budgets, progress (and when it moved) and
 * checkpoints through the shared control words, without a node.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineTask } from '../../../src/runtime/worker/task.js';
import { BUDGET, ControlFlags, PROGRESS, SPLIT_WANT, WANT_SPLIT } from '../../../src/runtime/worker/control-flags.js';
import type { FromWorker } from '../../../src/runtime/worker/messages.js';
import { runTask } from '../../../src/runtime/worker/task-runner.js';

interface Range { lo: number; hi: number; wants: number[] }

/** Refuses to split until it has done 500 items, then gives away the upper half (or `want` items). */
const reluctant = defineTask<Range, number>({
  name: 'reluctant',
  run(s, ctx) {
    const budget = ctx.budget();
    while (s.lo < s.hi) {
      ctx.emit(1);
      s.lo++;
      ctx.progress();
      if (budget !== undefined && s.lo % budget === 0) ctx.checkpoint();
      ctx.potentialSplit();
    }
  },
  split(s, want) {
    s.wants.push(want ?? -1);
    if (s.lo < 500) return undefined;
    const give = want ?? Math.floor((s.hi - s.lo) / 2);
    const child = { lo: s.hi - give, hi: s.hi, wants: [] };
    s.hi -= give;
    return child;
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});

async function run(flags: ControlFlags, state: Range) {
  const posted: FromWorker[] = [];
  await runTask(reluctant as never, { taskId: 't', jobId: 'j', ref: { module: 'm', export: 'default' }, state, partial: undefined, board: undefined, varNames: [] }, flags, (m) => posted.push(m));
  return posted;
}

describe('task context (runTask)', () => {
  it('a split request the task cannot serve yet stays pending and is served at a later split point, with the amount wanted', async () => {
    const flags = ControlFlags.forWorker(ControlFlags.allocate(1), 0);
    flags.setWide(SPLIT_WANT, 100);
    flags.set(WANT_SPLIT, 1);
    const state: Range = { lo: 0, hi: 10_000, wants: [] };
    const posted = await run(flags, state);
    const children = posted.filter((m) => m.type === 'child');
    assert.equal(children.length, 1, 'the one request was served once');
    assert.deepEqual((children[0] as { childState: Range }).childState, { lo: 9_900, hi: 10_000, wants: [] });
    assert.ok(state.wants.length > 1 && state.wants.every((w) => w === 100), 'split saw the amount wanted, refused, and was asked again');
    assert.equal(flags.get(WANT_SPLIT), 0);
    const done = posted.find((m) => m.type === 'done') as { partial: number };
    assert.equal(done.partial, 9_900, 'the parent counted only what it kept');
  });

  it('progress is counted in 64-bit shared memory; a budget reaches the task; checkpoints carry the state', async () => {
    const flags = ControlFlags.forWorker(ControlFlags.allocate(1), 0);
    flags.setWide(PROGRESS, 2 ** 31 + 5); // past what a 32-bit word holds
    flags.setWide(BUDGET, 1_000);
    assert.deepEqual(flags.progressSample(), { units: 2 ** 31 + 5, atNs: 0n }, 'never moved: stamped 0');
    const before = process.hrtime.bigint();
    const posted = await run(flags, { lo: 0, hi: 3_000, wants: [] });
    const after = process.hrtime.bigint();
    assert.equal(flags.getWide(PROGRESS), 2 ** 31 + 5 + 3_000);
    const sample = flags.progressSample()!;
    assert.equal(sample.units, 2 ** 31 + 5 + 3_000);
    assert.ok(sample.atNs > before && sample.atNs < after, 'stamped when it last moved');
    const checkpoints = posted.filter((m) => m.type === 'checkpoint') as Array<{ state: Range; partial: number }>;
    assert.deepEqual(checkpoints.map((c) => [c.partial]), [[1_000], [2_000], [3_000]]);
  });

  it('a global variable proposal over the size limit fails the task, naming the variable; nothing goes to the node', async () => {
    const greedy = defineTask<{ size: number }, number>({
      name: 'greedy',
      run(s, ctx) {
        ctx.setVar('incumbent', { value: 1, solution: 'x'.repeat(s.size) });
        ctx.emit(1);
      },
      result: { initial: () => 0, combine: (a, b) => a + b },
      vars: { incumbent: 'replace' },
    });
    const flags = ControlFlags.forWorker(ControlFlags.allocate(1), 0);
    const posted: FromWorker[] = [];
    const req = { taskId: 't', jobId: 'j', ref: { module: 'm', export: 'default' }, partial: undefined, board: undefined, varNames: ['incumbent'] };
    await runTask(greedy as never, { ...req, state: { size: 600_000 } }, flags, (m) => posted.push(m));
    assert.deepEqual(posted.map((m) => m.type), ['failed']);
    assert.match((posted[0] as { error: string }).error, /global variable "incumbent" is 600\d+ bytes as JSON; the limit is 524288/);
    posted.length = 0;
    await runTask(greedy as never, { ...req, state: { size: 100_000 } }, flags, (m) => posted.push(m));
    assert.deepEqual(posted.map((m) => m.type), ['setVar', 'done'], 'a large value within the limit goes');
  });
});
