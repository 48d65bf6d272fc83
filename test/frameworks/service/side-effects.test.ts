// Side effects (seed 002 §3.3) through Distribution.local(): nested objects, arrays, typed arrays,
// Maps, Sets and new objects arrive in place; snapshot isolation; write-write conflicts are
// reported naming the location and both tasks (randomized), none for disjoint writes; keys that
// could reach a prototype are refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Distribution } from '../../../src/frameworks/service/distribution.js';
import { Capture } from '../../../src/frameworks/service/capture.js';
import { BatchApplier, WriteConflictError } from '../../../src/frameworks/service/apply-changes.js';
import { Rng } from '../../../src/util/rng.js';

const local = Distribution.local({ workers: 2 });
after(() => local.close());

test('nested objects, arrays, typed arrays, Maps, Sets and new objects arrive in place', async () => {
  const model = { layers: [{ w: new Float32Array(8), name: 'a' }, { w: new Float32Array(8), name: 'b' }], stats: new Map<string, number[]>(), seen: new Set<number>() };
  await local.parallelFor(0, 8, (i) => {
    const layer = model.layers[i % 2]!;
    layer.w[i] = i * 0.5;
    model.stats.set(`k${i}`, [i, i * i]);
    model.seen.add(i);
  });
  assert.deepEqual([...model.layers[0]!.w], [0, 0, 1, 0, 2, 0, 3, 0]);
  assert.deepEqual([...model.layers[1]!.w], [0, 0.5, 0, 1.5, 0, 2.5, 0, 3.5]);
  assert.equal(model.stats.size, 8);
  assert.deepEqual(model.stats.get('k5'), [5, 25]);
  assert.deepEqual([...model.seen].sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
  const tree = { children: [] as unknown[] };
  const t = local.task(() => {
    tree.children.push({ leaf: true, parent: tree });
    return tree.children.length;
  });
  await local.start([t]);
  assert.equal(await t.result, 1);
  assert.equal((tree.children[0] as { parent: unknown }).parent, tree, 'a new object referring to a captured one refers to the client object');
});

test('snapshot isolation: every task reads the batch start state, not another task’s writes', async () => {
  const cells = [1, 2, 3, 4];
  const sums = [0, 0, 0, 0];
  await local.parallelFor(0, 4, (i) => {
    cells[i] = cells[i]! * 10; // each task changes its own cell
    sums[i] = cells.reduce((a, b) => a + b, 0); // and reads the others from the snapshot
  });
  assert.deepEqual(cells, [10, 20, 30, 40]);
  assert.deepEqual(sums, [19, 28, 37, 46]);
});

test('a write-write conflict names the location and both tasks', async () => {
  const outputs = new Array<number>(10).fill(0);
  const tasks = Array.from({ length: 10 }, (_, i) => local.task(() => { outputs[i === 7 ? 3 : i] = i; }));
  await local.start(tasks);
  await tasks[3]!.result;
  await assert.rejects(tasks[7]!.result, (e: WriteConflictError) => {
    assert.equal(e.message, 'write-write conflict: outputs[3] written by task 3 and task 7');
    return true;
  });
  assert.equal(outputs[3], 3, 'the first writer keeps the location');
});

test('randomized: every write-write conflict is detected, none for disjoint locations', async () => {
  const rng = new Rng(13);
  let conflictsSeen = 0;
  let disjointRounds = 0;
  for (let round = 0; round < 6; round++) {
    const obj: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
    const arr = new Array<number>(12).fill(0);
    const typed = new Int32Array(12);
    const map = new Map<number, number>();
    const plan = Array.from({ length: 8 }, () => Array.from({ length: 3 }, () => ({ where: rng.int(0, 3), at: rng.int(0, round % 2 === 0 ? 11 : 39) })));
    // Expected: for each location, the first writer (task order) against every later writer.
    const writers = new Map<string, number[]>();
    const names = ['obj', 'arr', 'typed', 'map'];
    plan.forEach((writes, task) => {
      for (const w of writes) {
        if (w.at >= 12 && (w.where === 1 || w.where === 2)) continue; // out of range: no write
        const loc = w.where === 0 ? `obj.${'abcd'[w.at % 4]}` : w.where === 3 ? `map.get(${w.at})` : `${names[w.where]}[${w.at}]`;
        const list = writers.get(loc) ?? [];
        if (!list.includes(task)) list.push(task);
        writers.set(loc, list);
      }
    });
    const expected = new Set<string>();
    for (const [loc, list] of writers) for (const later of list.slice(1)) expected.add(`${loc} by task ${list[0]} and task ${later}`);
    const tasks = plan.map((writes, task) => local.task(() => {
      for (const w of writes) {
        if (w.where === 0) obj['abcd'[w.at % 4]!] = task + 1;
        else if (w.where === 1 && w.at < 12) arr[w.at] = task + 1;
        else if (w.where === 2 && w.at < 12) typed[w.at] = task + 1;
        else if (w.where === 3) map.set(w.at, task + 1);
      }
    }));
    await local.start(tasks);
    const reported = new Set<string>();
    for (const t of tasks) {
      await t.result.catch((e: unknown) => {
        assert.ok(e instanceof WriteConflictError, String(e));
        for (const c of e.conflicts) reported.add(`${c.location} by ${c.tasks[0]} and ${c.tasks[1]}`);
      });
    }
    assert.deepEqual([...reported].sort(), [...expected].sort(), `round ${round}`);
    conflictsSeen += expected.size;
    if ([...writers.values()].some((l) => l.length === 1)) disjointRounds++;
  }
  assert.ok(conflictsSeen > 10 && disjointRounds === 6, 'the rounds had both conflicting and disjoint writes');
});

test('writes to __proto__, constructor and prototype are refused; prototypes stay clean', () => {
  const cap = new Capture();
  const target = { x: 1 };
  cap.addTask(() => target.x);
  cap.done();
  const applier = new BatchApplier(cap);
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    assert.throws(() => applier.apply(0, { ok: true, base: cap.graph.nodes.length, w: [{ id: 1, k: key, v: { r: 2 } }], n: [{ t: 'o', p: [['polluted', true]] }] }), new RegExp(`refused a write to key "${key}"`));
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf(target), Object.prototype);
});

test('local: a task that exhausts its worker\'s heap fails its batch; the worker is replaced and the next batch runs', async () => {
  const small = Distribution.local({ workers: 1, memoryMb: 64 });
  try {
    const bomb = small.task(() => { const keep: number[][] = []; for (;;) keep.push(new Array(100_000).fill(1)); });
    await small.start([bomb]);
    await assert.rejects(bomb.result, /local worker thread died/);
    const ok = small.task(() => 6 * 7);
    await small.start([ok]);
    assert.equal(await ok.result, 42);
  } finally {
    await small.close();
  }
});
