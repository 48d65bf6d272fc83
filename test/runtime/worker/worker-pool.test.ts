/**
 * The worker pool on real threads: pipelined tasks (a worker's next task sent while it still runs
 * one) start in order, never inherit the control requests meant for the task before them, come
 * back unstarted when their slot is asked to migrate, and can be dropped before they start; a job
 * joined again gets its new variable board to the worker.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunRequest } from '../../../src/runtime/worker/messages.js';
import { VarBoard } from '../../../src/runtime/worker/var-board.js';
import { WorkerPool, type WorkerEvent } from '../../../src/runtime/worker/worker-pool.js';
import type { Gated } from '../apps/gated.js';
import { waitFor } from '../../support/wait.js';

const REF = { module: new URL('../apps/gated.ts', import.meta.url).href, export: 'default' };

describe('WorkerPool pipelining', () => {
  let pool: WorkerPool;
  const events: WorkerEvent[] = [];
  let n = 0;
  before(async () => {
    pool = new WorkerPool(1, (e) => events.push(e));
    await pool.start();
  });
  after(() => pool.close());

  /** A fresh job (its own `go` variable) and a way to run its tasks on slot 0. */
  function job() {
    const jobId = `j${++n}`;
    const board = VarBoard.allocate(['go']);
    const vars = new VarBoard(board, ['go']);
    const run = (taskId: string, state: Gated) => {
      const req: RunRequest = { taskId: `${jobId}-${taskId}`, jobId, ref: REF, state, partial: undefined, board, varNames: ['go'] };
      pool.run(0, req);
      return req.taskId;
    };
    const of = (taskId: string) => events.filter((e) => 'taskId' in e && e.taskId === taskId);
    return { run, of, go: () => vars.write('go', 1) };
  }
  const finished = (e: WorkerEvent) => e.type === 'done' || e.type === 'migrated' || e.type === 'cancelled' || e.type === 'failed';

  it('takes a second task while one runs, starts it right after, and reports both in order', async () => {
    const j = job();
    const first = j.run('a', { label: 'a', wait: true, spins: 0 });
    assert.deepEqual(pool.idleSlots(), []);
    assert.deepEqual(pool.pipelineSlots(), [0]);
    const second = j.run('b', { label: 'b', wait: false, spins: 0 });
    assert.deepEqual(pool.pipelineSlots(), [], 'one task at most waits behind the running one');
    assert.throws(() => j.run('c', { label: 'c', wait: false, spins: 0 }), /cannot take another task/);
    assert.equal(pool.currentTask(0), first);
    j.go();
    await waitFor(() => pool.idleSlots().length === 1, 'both tasks to finish');
    const order = events.filter(finished).filter((e) => 'taskId' in e && (e.taskId === first || e.taskId === second));
    assert.deepEqual(order.map((e) => [e.type, 'taskId' in e ? e.taskId : '']), [['done', first], ['done', second]]);
  });

  it('a split request meant for the running task does not carry over to the pipelined one', async () => {
    const j = job();
    const first = j.run('a', { label: 'a', wait: true, spins: 0, offers: 0 }); // finishes without a split point
    const second = j.run('b', { label: 'b', wait: false, spins: 0 });
    pool.requestSplit(0);
    j.go();
    await waitFor(() => j.of(second).some(finished), 'the pipelined task to finish');
    assert.equal(j.of(first).at(-1)!.type, 'done');
    assert.equal(j.of(second).filter((e) => e.type === 'child').length, 0, 'the stale request was not served by the next task');
    // Control: the same request made to a task while it runs is served.
    const k = job();
    const third = k.run('c', { label: 'c', wait: true, spins: 0 });
    pool.requestSplit(0);
    k.go();
    await waitFor(() => k.of(third).some(finished), 'the third task to finish');
    assert.equal(k.of(third).filter((e) => e.type === 'child').length, 1);
  });

  it('a migrate request returns the pipelined task unstarted, with its state as sent', async () => {
    const j = job();
    const first = j.run('a', { label: 'a', wait: true, spins: 0 });
    const second = j.run('b', { label: 'b', wait: true, spins: 0 });
    await waitFor(() => pool.currentTask(0) === first, 'the first task to run');
    pool.requestMigrate(0);
    await waitFor(() => j.of(second).some(finished), 'the pipelined task to come back');
    const migratedFirst = j.of(first).find((e) => e.type === 'migrated');
    assert.ok(migratedFirst && migratedFirst.type === 'migrated' && (migratedFirst.state as Gated).spins > 0, 'the running task migrated mid-run');
    const back = j.of(second).at(-1)!;
    assert.equal(back.type, 'migrated');
    assert.deepEqual(back.type === 'migrated' ? back.state : null, { label: 'b', wait: true, spins: 0 }, 'never started');
    assert.deepEqual(pool.idleSlots(), [0]);
  });

  it('a dropped pipelined task never runs: it is reported cancelled', async () => {
    const j = job();
    const first = j.run('a', { label: 'a', wait: true, spins: 0 });
    const second = j.run('b', { label: 'b', wait: false, spins: 0 });
    pool.drop(0, second);
    j.go();
    await waitFor(() => j.of(second).some(finished), 'the dropped task to be reported');
    assert.equal(j.of(first).at(-1)!.type, 'done');
    assert.deepEqual(j.of(second).map((e) => e.type), ['cancelled']);
  });

  it('a job joined again with a new variable board: the worker reads the new board, not the one it held', async () => {
    const jobId = `j${++n}`;
    const request = (taskId: string, board: SharedArrayBuffer): RunRequest => ({ taskId: `${jobId}-${taskId}`, jobId, ref: REF, state: { label: taskId, wait: true, spins: 0 }, partial: undefined, board, varNames: ['go'] });
    const of = (taskId: string) => events.filter((e) => 'taskId' in e && e.taskId === `${jobId}-${taskId}`);
    // The first participation: its board says go.
    const first = VarBoard.allocate(['go']);
    new VarBoard(first, ['go']).write('go', 1);
    pool.run(0, request('a', first));
    await waitFor(() => of('a').some(finished), 'the first participation\'s task');
    assert.equal(of('a').at(-1)!.type, 'done');
    // The node left the job and joined it again: a new board, where go is not set.
    const second = VarBoard.allocate(['go']);
    pool.run(0, request('b', second));
    await waitFor(() => pool.currentTask(0) === `${jobId}-b`, 'the task of the second participation to run');
    pool.requestMigrate(0);
    await waitFor(() => of('b').some(finished), 'the task to come back');
    assert.equal(of('b').at(-1)!.type, 'migrated', 'it waited on the new board (the old one said go)');
    pool.run(0, request('c', second));
    new VarBoard(second, ['go']).write('go', 1);
    await waitFor(() => of('c').some(finished), 'the task to see go on the new board');
    assert.equal(of('c').at(-1)!.type, 'done');
  });

  it('names the job of the task each report is about, also when two jobs use one task id (every job\'s first task is root)', async () => {
    const runAs = (jobId: string, state: Gated) => {
      const board = VarBoard.allocate(['go']);
      pool.run(0, { taskId: 'root', jobId, ref: REF, state, partial: undefined, board, varNames: ['go'] });
      return new VarBoard(board, ['go']);
    };
    const from = events.length;
    const old = runAs('job-old', { label: 'old', wait: true, spins: 0 });
    runAs('job-new', { label: 'new', wait: false, spins: 0 });
    old.write('go', 1);
    await waitFor(() => pool.idleSlots().length === 1, 'both roots to finish');
    const roots = events.slice(from).filter(finished).map((e) => [e.type, 'taskId' in e ? e.taskId : '', e.job]);
    assert.deepEqual(roots, [['done', 'root', 'job-old'], ['done', 'root', 'job-new']], 'each report names the job whose task it is');
  });
});
