/**
 * The task pool's state machine on its own (src/runtime/pool/pool-tasks.ts): the moves it allows are
 * exactly the ones listed here (written out by hand, from the protocol: recording, claiming and
 * migrating lead to a place; a task on a worker ends by completing, migrating, being abandoned or
 * going; an offer ends with the receiver's claim or a take-back), every other move throws naming the
 * task and both states, a task that left the table never moves again, and `validate` names each
 * broken invariant.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IllegalTransition, MOVES, POOL_TASK_STATES, PoolTask, PoolTasks, type PoolTaskState } from '../../src/runtime/pool/pool-tasks.js';
import type { TaskSnapshot } from '../../src/runtime/pool/task-snapshot.js';

const LEGAL = new Set([
  'new → recording', 'new → claiming', 'new → pooled', 'new → running', 'new → early', 'new → offered',
  'recording → pooled', 'recording → running', 'recording → offered', 'recording → gone',
  'claiming → pooled', 'claiming → running', 'claiming → offered', 'claiming → gone',
  'migrating → pooled', 'migrating → running', 'migrating → offered', 'migrating → gone',
  'pooled → running', 'pooled → offered', 'pooled → gone',
  'running → completing', 'running → migrating', 'running → abandoned', 'running → gone',
  'early → running', 'early → abandoned', 'early → gone',
  'abandoned → gone',
  'offered → claiming', 'offered → gone',
  'completing → gone',
]);

const snap = (id: string): TaskSnapshot => ({ id, state: { n: 1 }, partial: undefined, version: 0 });

/** A table holding one task `id` in `state`, with what that state needs. */
function holding(state: PoolTaskState | 'new', id = 't'): { tasks: PoolTasks; task: PoolTask } {
  const tasks = new PoolTasks();
  const task = new PoolTask(id);
  if (state !== 'new') dress(tasks, task, state);
  return { tasks, task };
}

/** Moves `task` to `state` and gives it what the state needs (snapshot, slot, offer, held reports). */
function dress(tasks: PoolTasks, task: PoolTask, state: PoolTaskState): void {
  tasks.move(task, state);
  if (['recording', 'claiming', 'migrating', 'pooled', 'offered'].includes(state)) task.snapshot = snap(task.id);
  if (['running', 'early', 'abandoned'].includes(state)) task.slot = 0;
  if (state === 'offered') task.offer = { to: 'n2', requestId: undefined, kind: 'steal', deadline: 10, handedOut: snap(task.id) };
  if (state === 'early') task.held = [];
}

/** The states a task in `from` can reach from `new` (the table only takes tasks through legal moves). */
const PATH: Record<PoolTaskState, PoolTaskState[]> = {
  recording: ['recording'], claiming: ['claiming'], pooled: ['pooled'], running: ['running'], early: ['early'], offered: ['offered'],
  migrating: ['running', 'migrating'], abandoned: ['running', 'abandoned'], completing: ['running', 'completing'],
};

function at(state: PoolTaskState): { tasks: PoolTasks; task: PoolTask } {
  const tasks = new PoolTasks();
  const task = new PoolTask('t');
  for (const s of PATH[state]) dress(tasks, task, s);
  return { tasks, task };
}

describe('the task pool\'s state machine', () => {
  it('lists exactly the moves of the protocol', () => {
    const listed = new Set(Object.entries(MOVES).flatMap(([from, tos]) => tos.map((to) => `${from} → ${to}`)));
    assert.deepEqual([...listed].sort(), [...LEGAL].sort());
  });

  it('makes every legal move and refuses every other, naming the task and both states', () => {
    const targets = [...POOL_TASK_STATES, 'gone'] as const;
    for (const from of ['new', ...POOL_TASK_STATES] as const) {
      for (const to of targets) {
        const { tasks, task } = from === 'new' ? holding('new') : at(from);
        const move = `${from} → ${to}`;
        if (LEGAL.has(move)) {
          tasks.move(task, to);
          assert.equal(task.state, to, move);
          assert.equal(tasks.get('t'), to === 'gone' ? undefined : task, move);
          assert.equal(tasks.size, to === 'gone' ? 0 : 1, move);
        } else {
          assert.throws(() => tasks.move(task, to), (err: unknown) => err instanceof IllegalTransition && err.message.startsWith(`task t: ${move} is not a move`), move);
          assert.equal(task.state, from, `${move} refused: the task stays ${from}`);
        }
      }
    }
  });

  it('a task that left the table never moves again; a second task of the same id is refused while the first is held', () => {
    const { tasks, task } = at('pooled');
    assert.throws(() => tasks.create('t', 'pooled'), /task t: pooled → pooled is not a move/);
    tasks.move(task, 'gone');
    assert.throws(() => tasks.move(task, 'pooled'), /task t: gone → pooled is not a move of the task pool's state machine \(from gone: none, it left the table\)/);
    const again = tasks.create('t', 'claiming');
    assert.equal(tasks.get('t'), again);
  });

  it('drops what belongs to the state a task leaves: its slot, offer, held reports and snapshot', () => {
    const { tasks, task } = at('early');
    task.held!.push({ type: 'cancelled', taskId: 't', slot: 0 });
    tasks.move(task, 'running');
    assert.equal(task.held, undefined);
    assert.equal(task.slot, 0, 'a claimed early start keeps its worker');
    tasks.move(task, 'migrating');
    assert.equal(task.slot, undefined);
    const offered = at('offered');
    offered.tasks.move(offered.task, 'claiming');
    assert.equal(offered.task.offer, undefined);
    const pooled = at('pooled');
    pooled.tasks.move(pooled.task, 'running');
    assert.equal(pooled.task.snapshot, undefined);
  });

  it('keeps the pool in order: oldest first, taken from either end or the middle', () => {
    const tasks = new PoolTasks();
    for (const id of ['a', 'b', 'c', 'd']) dress(tasks, new PoolTask(id), 'pooled');
    assert.deepEqual(tasks.pooled.map((t) => t.id), ['a', 'b', 'c', 'd']);
    tasks.takePooled(3, 'running');
    tasks.move(tasks.get('a')!, 'offered');
    tasks.takePooled(0, 'gone');
    assert.deepEqual(tasks.pooled.map((t) => t.id), ['c']);
    assert.deepEqual([tasks.count('pooled'), tasks.count('running'), tasks.count('offered')], [1, 1, 1]);
    assert.throws(() => tasks.takePooled(1, 'gone'), /no pooled task at 1 \(1 pooled\)/);
  });

  it('validate names each broken invariant', () => {
    const cases: Array<[string, (t: PoolTask) => void, PoolTaskState, RegExp]> = [
      ['a running task without a slot', (t) => { t.slot = undefined; }, 'running', /task t is running without a worker slot/],
      ['a pooled task with a slot', (t) => { t.slot = 1; }, 'pooled', /task t is pooled with a worker slot/],
      ['a slot beyond the workers', (t) => { t.slot = 2; }, 'running', /task t is on slot 2 of 2/],
      ['an offered task without its offer', (t) => { t.offer = undefined; }, 'offered', /task t is offered without an offer/],
      ['an early start without held reports', (t) => { t.held = undefined; }, 'early', /task t is early without held reports/],
      ['a claiming task without its snapshot', (t) => { t.snapshot = undefined; }, 'claiming', /task t is claiming without its snapshot/],
      ['a snapshot of another task', (t) => { t.snapshot = snap('u'); }, 'recording', /task t holds the snapshot of u/],
      ['a state changed behind the table\'s back', (t) => { t.state = 'running'; }, 'pooled', /task t is listed as pooled but is running/],
    ];
    for (const [what, spoil, state, message] of cases) {
      const { tasks, task } = at(state);
      tasks.validate(2);
      spoil(task);
      assert.throws(() => tasks.validate(2), message, what);
    }
  });
});
