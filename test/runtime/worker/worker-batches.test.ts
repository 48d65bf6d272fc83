/**
 * Batches between the node and a real worker thread: several tasks in one dispatch (run in order,
 * one dispatch where pipelining is concerned, migrated back or dropped like pipelined tasks); a task's
 * spawned children handed over several at a time — SPAWN_BATCH per message, the rest with its
 * completion, at once when work is wanted; and children run inline after their parent while nobody
 * waits for work, each one contribution, handed over as spawned when one needs a task of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FromWorker, RunRequest } from '../../../src/runtime/worker/messages.js';
import { SPAWN_BATCH } from '../../../src/runtime/worker/task-runner.js';
import { VarBoard } from '../../../src/runtime/worker/var-board.js';
import { WorkerPool, type WorkerEvent } from '../../../src/runtime/worker/worker-pool.js';
import type { Gated } from '../apps/gated.js';
import type { SpawnChecksum, Tally } from '../apps/spawn-checksum.js';
import { waitFor } from '../../support/wait.js';

const GATED = { module: new URL('../apps/gated.ts', import.meta.url).href, export: 'default' };
const CHECKSUM = { module: new URL('../apps/spawn-checksum.ts', import.meta.url).href, export: 'default' };
const RETRIED = { ...CHECKSUM, export: 'retried' };
const TREE = { module: new URL('../apps/spawn-tree.ts', import.meta.url).href, export: 'default' };

type Ev<T extends FromWorker['type']> = Extract<WorkerEvent, { type: T }>;

describe('WorkerPool batches', () => {
  let pool: WorkerPool;
  const events: WorkerEvent[] = [];
  let n = 0;
  before(async () => {
    pool = new WorkerPool(1, (e) => events.push(e));
    await pool.start();
  });
  after(() => pool.close());

  /** A fresh job (its own `go` variable): run requests for slot 0 and its tasks' events. */
  function job(ref: typeof GATED) {
    const jobId = `b${++n}`;
    const board = VarBoard.allocate(['go']);
    const vars = new VarBoard(board, ['go']);
    const req = (taskId: string, state: unknown): RunRequest => ({ taskId: `${jobId}-${taskId}`, jobId, ref, state, partial: undefined, board, varNames: ['go'] });
    const of = (taskId: string) => events.filter((e) => 'taskId' in e && e.taskId === taskId);
    return { req, of, go: () => vars.write('go', 1) };
  }
  const finished = (e: WorkerEvent) => e.type === 'done' || e.type === 'migrated' || e.type === 'cancelled' || e.type === 'failed';
  const leaf = (value: number): SpawnChecksum => ({ root: false, next: 0, n: 0, value, hold: false });

  it('runs a batch in order as one dispatch: a second waits behind it, a third is refused', async () => {
    const j = job(CHECKSUM);
    const first = [1, 2, 3].map((v) => j.req(`a${v}`, leaf(v)));
    const second = [4, 5].map((v) => j.req(`b${v}`, leaf(v)));
    pool.runBatch(0, [j.req('gate', { ...leaf(0), hold: true }), ...first]);
    assert.deepEqual(pool.pipelineSlots(), [0], 'a batch is one dispatch');
    pool.runBatch(0, second);
    assert.deepEqual(pool.pipelineSlots(), []);
    assert.throws(() => pool.run(0, j.req('c', leaf(6))), /cannot take another task/);
    j.go();
    await waitFor(() => pool.idleSlots().length === 1, 'both batches to finish');
    const ids = [...first, ...second].map((r) => r.taskId);
    const done = events.filter((e): e is Ev<'done'> => e.type === 'done' && ids.includes(e.taskId));
    assert.deepEqual(done.map((e) => e.taskId), ids, 'completions reported in order');
    assert.deepEqual(done.map((e) => (e.partial as Tally).sum), [1, 2, 3, 4, 5]);
  });

  it('a migrate request returns the rest of a batch unstarted; a dropped task of a batch never runs', async () => {
    const j = job(GATED);
    const [a, b, c] = ['a', 'b', 'c'].map((l) => j.req(l, { label: l, wait: l === 'a', spins: 0 } satisfies Gated));
    pool.runBatch(0, [a!, b!, c!]);
    await waitFor(() => pool.currentTask(0) === a!.taskId, 'the first task to run');
    pool.requestMigrate(0);
    await waitFor(() => j.of(c!.taskId).some(finished), 'the batch to come back');
    for (const r of [b!, c!]) {
      const back = j.of(r.taskId);
      assert.deepEqual(back.map((e) => e.type), ['migrated']);
      assert.equal(((back[0] as Ev<'migrated'>).state as Gated).spins, 0, 'never started');
    }
    const k = job(GATED);
    const [d, e, f] = ['d', 'e', 'f'].map((l) => k.req(l, { label: l, wait: l === 'd', spins: 0 } satisfies Gated));
    pool.runBatch(0, [d!, e!, f!]);
    pool.drop(0, e!.taskId);
    k.go();
    await waitFor(() => k.of(f!.taskId).some(finished), 'the batch to finish');
    assert.deepEqual([d!, e!, f!].map((r) => k.of(r.taskId).filter(finished).map((x) => x.type)), [['done'], ['cancelled'], ['done']]);
  });

  it(`hands spawned children over ${SPAWN_BATCH} at a time, the rest with the completion`, async () => {
    const j = job(RETRIED); // with retries a task's children never run inline
    const root = j.req('root', { root: true, next: 0, n: 70, value: 0, hold: false } satisfies SpawnChecksum);
    pool.run(0, root);
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const reports = j.of(root.taskId);
    assert.deepEqual(reports.map((e) => e.type), ['children', 'children', 'done']);
    const [b1, b2] = reports as [Ev<'children'>, Ev<'children'>];
    assert.deepEqual(b1.states.map((s) => (s as SpawnChecksum).value), Array.from({ length: 32 }, (_, i) => i + 1));
    assert.equal((b1.checkpoint.state as SpawnChecksum).next, 32, 'the checkpoint is the state right after the batch');
    assert.equal((b2.checkpoint.state as SpawnChecksum).next, 64);
    const done = reports[2] as Ev<'done'>;
    assert.deepEqual(done.children?.map((s) => (s as SpawnChecksum).value), [65, 66, 67, 68, 69, 70]);
    assert.equal(done.inline, undefined);
  });

  it('runs the children left at the end inline, newest first: one contribution each, none handed over', async () => {
    const j = job(CHECKSUM);
    const root = j.req('root', { root: true, next: 0, n: 40, value: 0, hold: false } satisfies SpawnChecksum);
    pool.run(0, root);
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const reports = j.of(root.taskId);
    assert.deepEqual(reports.map((e) => e.type), ['children', 'done']);
    assert.equal((reports[0] as Ev<'children'>).states.length, SPAWN_BATCH);
    // Inline running stops after a child that took long (a loaded machine may preempt any of them): the
    // first runs inline surely, the newest first; whatever did not is handed over with the completion.
    const done = reports[1] as Ev<'done'>;
    const ran = done.inline?.tasks ?? 0;
    assert.ok(ran >= 1);
    const newest = [40, 39, 38, 37, 36, 35, 34, 33].slice(0, ran);
    assert.deepEqual(done.inline?.value, { count: ran, sum: newest.reduce((a, b) => a + b, 0) }, 'their contributions, folded');
    assert.deepEqual((done.children ?? []).map((c) => (c as SpawnChecksum).value), [33, 34, 35, 36, 37, 38, 39, 40].slice(0, 8 - ran));
  });

  it('a child run inline starts from nothing, not from its parent\'s recovered partial result', async () => {
    const j = job(CHECKSUM);
    const root: RunRequest = { ...j.req('root', { root: true, next: 0, n: 1, value: 0, hold: false } satisfies SpawnChecksum), partial: { count: 100, sum: 1_000 } };
    pool.run(0, root);
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const done = j.of(root.taskId).at(-1) as Ev<'done'>;
    assert.deepEqual(done.partial, { count: 100, sum: 1_000 });
    assert.deepEqual(done.inline, { tasks: 1, value: { count: 1, sum: 1 } });
  });

  it('runs a spawned tree inline: every task one contribution, with the root\'s completion', async () => {
    const j = job(TREE);
    const root = j.req('root', { level: 0, depth: 6 });
    pool.run(0, root);
    await waitFor(() => j.of(root.taskId).some(finished), 'the tree to finish');
    const done = j.of(root.taskId).at(-1) as Ev<'done'>;
    assert.equal(done.type, 'done');
    assert.equal(done.partial, 1);
    const ran = done.inline?.tasks ?? 0;
    assert.ok(ran >= 1);
    assert.equal(done.inline?.value, ran, 'one emitted 1 per task run inline, folded');
    // Every task below the root ran inline, or is in a subtree handed over (if inline running stopped early).
    const handedOver = (done.children ?? []).reduce((n: number, c) => n + 2 ** (6 - (c as { level: number }).level + 1) - 1, 0);
    assert.equal(ran + handedOver, 2 ** 7 - 2);
  });

  it('hands a child over as it was spawned when, run inline, it needs a task of its own (a checkpoint)', async () => {
    const j = job(CHECKSUM);
    const root = j.req('root', { root: true, next: 0, n: 5, value: 0, hold: false, checkpointChildren: true } satisfies SpawnChecksum);
    pool.run(0, root);
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const reports = j.of(root.taskId);
    assert.deepEqual(reports.map((e) => e.type), ['done'], 'the inline checkpoint was never reported');
    const done = reports[0] as Ev<'done'>;
    assert.equal(done.inline, undefined, 'the abandoned run contributed nothing');
    assert.deepEqual(done.children?.map((s) => s as SpawnChecksum), [1, 2, 3, 4, 5].map((v) => ({ root: false, next: 0, n: 0, value: v, hold: false, checkpointChildren: true })));
  });

  it('stops running a child inline when work is wanted: it goes as spawned with the rest, with the completion', async () => {
    const j = job(CHECKSUM);
    // Children run inline newest first: 10 holds until someone wants work.
    const root = j.req('root', { root: true, next: 0, n: 10, value: 0, hold: false, holdValue: 10 } satisfies SpawnChecksum);
    const progress = pool.progress(0);
    const before = performance.now();
    pool.run(0, root);
    await waitFor(() => pool.progress(0) > progress, 'child 10 to hold, inline');
    // The worker stamps its progress on its own thread; the node reads the stamp on its clock.
    const sample = pool.progressSample(0)!;
    assert.equal(sample.units, pool.progress(0));
    assert.ok(sample.atMs >= before && sample.atMs <= performance.now(), `progress stamped at ${sample.atMs}, between ${before} and now`);
    pool.requestSplit(0); // an idle worker or a thief waits for work
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const reports = j.of(root.taskId);
    assert.deepEqual(reports.map((e) => e.type), ['done']);
    const done = reports[0] as Ev<'done'>;
    assert.equal(done.inline, undefined, 'the abandoned run contributed nothing');
    assert.deepEqual(done.children?.map((c) => c as SpawnChecksum), Array.from({ length: 10 }, (_, i) => ({ root: false, next: 0, n: 0, value: i + 1, hold: false, holdValue: 10 })), 'child 10 handed over as spawned, with the rest');
  });

  it('hands a spawned child over at once when work is wanted', async () => {
    const j = job(CHECKSUM);
    const root = j.req('root', { root: true, next: 0, n: 40, value: 0, hold: false, gateRoot: true } satisfies SpawnChecksum);
    pool.run(0, root);
    pool.requestSplit(0); // an idle worker or a thief waits for work
    j.go();
    await waitFor(() => j.of(root.taskId).some(finished), 'the root to finish');
    const reports = j.of(root.taskId);
    const sizes = reports.map((e) => [e.type, e.type === 'children' ? e.states.length : e.type === 'done' ? (e.inline?.tasks ?? 0) + (e.children?.length ?? 0) : 0]);
    assert.deepEqual(sizes, [['children', 1], ['children', 32], ['done', 7]]);
    assert.equal(((reports[0] as Ev<'children'>).checkpoint.state as SpawnChecksum).next, 1);
    assert.equal(pool.splitRequested(0), false, 'the request was served');
  });
});
