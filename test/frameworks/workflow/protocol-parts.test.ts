/**
 * The parts of the protocol on their own: rendezvous hashing moves only the keys a membership change
 * must move (property test), the location service's states and waiters (Fig. 5), the worker's file
 * states, first-READY-first-run and locality-preferring stealing (Fig. 2, 4).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../../src/util/rng.js';
import { LocationShard } from '../../../src/frameworks/workflow/location-shard.js';
import { Rendezvous } from '../../../src/frameworks/workflow/rendezvous.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { WorkerTasks } from '../../../src/frameworks/workflow/worker-tasks.js';

describe('rendezvous hashing', () => {
  it('a leave moves exactly the leaver\'s keys, a join moves only keys to the joiner; keys spread evenly', () => {
    const rng = new Rng(42);
    for (let round = 0; round < 20; round++) {
      const members = Array.from({ length: 2 + rng.int(0, 8) }, (_, i) => `node-${round}-${i}`);
      const keys = Array.from({ length: 2000 }, (_, i) => `file-${rng.int(0, 1e9)}-${i}`);
      const before = new Rendezvous(members);
      const owner = new Map(keys.map((k) => [k, before.ownerOf(k)]));
      const leaver = members[rng.int(0, members.length - 1)]!;
      const after = new Rendezvous(members.filter((m) => m !== leaver));
      for (const k of keys) {
        const moved = after.ownerOf(k) !== owner.get(k);
        assert.equal(moved, owner.get(k) === leaver, `key ${k} moved only if its owner left`);
      }
      const joined = new Rendezvous([...members, `joiner-${round}`]);
      for (const k of keys) {
        const now = joined.ownerOf(k);
        assert.ok(now === owner.get(k) || now === `joiner-${round}`, 'a join moves keys only to the joiner');
      }
      const counts = new Map<string, number>();
      for (const k of keys) counts.set(owner.get(k)!, (counts.get(owner.get(k)!) ?? 0) + 1);
      const fair = keys.length / members.length;
      for (const m of members) assert.ok((counts.get(m) ?? 0) > fair * 0.7 && (counts.get(m) ?? 0) < fair * 1.3, `${m} owns ${counts.get(m)} of ~${fair}`);
    }
  });
});

describe('location service shard', () => {
  it('INVALID → VALID: queries before the update wait and are all notified once; later queries are answered', () => {
    const shard = new LocationShard();
    assert.deepEqual(shard.query(7, 'w1'), { state: 'INVALID' });
    assert.deepEqual(shard.query(7, 'w2'), { state: 'INVALID' });
    assert.deepEqual(shard.query(7, 'w1'), { state: 'INVALID' });
    assert.deepEqual(shard.update(7, { node: 'p' }).sort(), ['w1', 'w2']);
    assert.deepEqual(shard.query(7, 'w3'), { state: 'VALID', location: { node: 'p' } });
    assert.deepEqual(shard.update(7, { node: 'p' }), [], 'waiters were notified once');
    assert.deepEqual(shard.nodeLeft('p'), [7], 'its holder left: the file is lost');
    assert.equal(shard.state(7), 'INVALID');
  });

  it('hands entries to another shard with their waiters', () => {
    const a = new LocationShard();
    a.query(1, 'w');
    a.update(2, { node: 'x' });
    const moved = a.handOff((f) => f === 2);
    assert.equal(a.size, 1);
    const b = new LocationShard();
    assert.deepEqual(b.takeOver(moved), []);
    assert.deepEqual(b.update(1, { node: 'y' }), ['w']);
  });
});

describe('worker file states and READY queue', () => {
  const wf = new WorkflowBuilder('w')
    .task({ id: 'a', outputs: [{ name: 'A', size: 10 }] })
    .task({ id: 'b', outputs: [{ name: 'B', size: 1000 }] })
    .task({ id: 'c', inputs: ['A'] })
    .task({ id: 'd', inputs: ['B'] })
    .task({ id: 'e', inputs: ['A', 'B', 'in'] })
    .build();
  const f = (name: string) => wf.files.findIndex((x) => x.name === name);
  const t = (id: string) => wf.taskIndex(id);

  it('INVALID → REMOTE/LOCAL; a task is READY when its last input is located; first READY first run', () => {
    const w = new WorkerTasks(wf, 'me', (file) => wf.files[file]!.producer < 0);
    assert.deepEqual(w.assign(t('e')).sort(), [f('A'), f('B')].sort(), 'the shared input needs no query');
    assert.deepEqual(w.assign(t('d')), [], 'B is already asked for');
    assert.deepEqual(w.assign(t('c')), []);
    assert.equal(w.fileState(f('in')), 'SHARED');
    w.located(f('B'), { node: 'peer' });
    assert.equal(w.fileState(f('B')), 'REMOTE');
    w.located(f('A'), { node: 'me' });
    assert.equal(w.fileState(f('A')), 'LOCAL');
    assert.deepEqual([w.take(), w.take(), w.take(), w.take()], [t('d'), t('e'), t('c'), undefined], 'in the order they became READY');
  });

  it('an input its holder could not serve is INVALID again, asked for once; its task waits for the new location', () => {
    const w = new WorkerTasks(wf, 'me', (file) => wf.files[file]!.producer < 0);
    w.assign(t('c'));
    w.located(f('A'), { node: 'gone' });
    assert.equal(w.take(), t('c'));
    assert.deepEqual(w.forget(f('A')), [f('A')], 'asked for again');
    assert.deepEqual(w.forget(f('A')), [], 'once');
    assert.deepEqual(w.requeue(t('c')), [], 'the query is already out');
    assert.equal(w.take(), undefined, 'c waits for A');
    w.located(f('A'), { node: 'x' });
    assert.equal(w.take(), t('c'));
    assert.deepEqual(w.forget(f('in')), [], 'a shared input is never forgotten');
  });

  it('an input forgotten by one task makes the other READY tasks that read it wait again (none starts without a location)', () => {
    const w = new WorkerTasks(wf, 'me', (file) => wf.files[file]!.producer < 0);
    w.assign(t('c'));
    w.assign(t('e'));
    w.located(f('A'), { node: 'gone' });
    w.located(f('B'), { node: 'peer' });
    assert.equal(w.take(), t('c'), 'c runs; e is READY behind it');
    assert.deepEqual(w.forget(f('A')), [f('A')], 'c could not fetch A');
    w.requeue(t('c'));
    assert.equal(w.take(), undefined, 'e read A too: it waits, and so does c');
    w.located(f('A'), { node: 'x' });
    const started = [w.take(), w.take()];
    assert.deepEqual(started.sort(), [t('c'), t('e')].sort());
    for (const task of started) for (const file of wf.tasks[task!]!.inputs) assert.ok(w.fileState(file) === 'SHARED' || w.location(file) !== undefined, `task ${task} has a location for input ${file}`);
  });

  it('stealing prefers READY tasks whose inputs the thief holds, and a lost holder makes them wait again', () => {
    const w = new WorkerTasks(wf, 'me', (file) => wf.files[file]!.producer < 0);
    w.assign(t('c'));
    w.assign(t('d'));
    w.located(f('A'), { node: 'x' });
    w.located(f('B'), { node: 'thief' });
    const stolen = w.steal('thief', 1, 0);
    assert.deepEqual(stolen.map((s) => s.task), [t('d')], 'd reads B, which the thief holds');
    assert.deepEqual(w.nodeLeft('x'), [f('A')]);
    assert.equal(w.readyCount, 0, 'c waits for A again');
    w.located(f('A'), { node: 'y' });
    assert.equal(w.take(), t('c'));
  });
});
