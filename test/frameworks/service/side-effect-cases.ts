/**
 * Side effects (seed 002 §3.3) as test bodies over any Distribution: side-effects.test.ts runs them
 * through Distribution.local() and through the HTTPS service with isolated-vm sandboxes,
 * service-zookeeper.test.ts through the service on node processes.
 */
import assert from 'node:assert/strict';
import type { Distribution } from '../../../src/frameworks/service/index.js';
import { WriteConflictError } from '../../../src/frameworks/service/apply-changes.js';
import { Rng } from '../../../src/util/rng.js';

/** Nested objects, arrays, typed arrays, Maps, Sets and new objects arrive in place. */
export async function nestedWritesArrive(dist: Distribution): Promise<void> {
  const model = { layers: [{ w: new Float32Array(8), name: 'a' }, { w: new Float32Array(8), name: 'b' }], stats: new Map<string, number[]>(), seen: new Set<number>(), meta: { deep: { count: [0, 0, 0, 0, 0, 0, 0, 0] } } };
  await dist.parallelFor(0, 8, (i) => {
    const layer = model.layers[i % 2]!;
    layer.w[i] = i * 0.5;
    model.stats.set(`k${i}`, [i, i * i]);
    model.seen.add(i);
    model.meta.deep.count[i] = i + 100;
  });
  assert.deepEqual([...model.layers[0]!.w], [0, 0, 1, 0, 2, 0, 3, 0]);
  assert.deepEqual([...model.layers[1]!.w], [0, 0.5, 0, 1.5, 0, 2.5, 0, 3.5]);
  assert.equal(model.stats.size, 8);
  assert.deepEqual(model.stats.get('k5'), [5, 25]);
  assert.deepEqual([...model.seen].sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(model.meta.deep.count, [100, 101, 102, 103, 104, 105, 106, 107]);
  const tree = { children: [] as unknown[] };
  const t = dist.task(() => {
    tree.children.push({ leaf: true, parent: tree, tags: new Map([['x', new Uint16Array([7, 8])]]) });
    return tree.children.length;
  });
  await dist.start([t]);
  assert.equal(await t.result, 1);
  const child = tree.children[0] as { leaf: boolean; parent: unknown; tags: Map<string, Uint16Array> };
  assert.equal(child.parent, tree, 'a new object referring to a captured one refers to the client object');
  assert.equal(child.leaf, true);
  assert.ok(child.tags.get('x') instanceof Uint16Array, 'a new Map holding a new typed array arrives as such');
  assert.deepEqual([...child.tags.get('x')!], [7, 8]);
}

/** Every task reads the batch's start state, not another task's writes. */
export async function snapshotIsolation(dist: Distribution): Promise<void> {
  const cells = [1, 2, 3, 4];
  const sums = [0, 0, 0, 0];
  await dist.parallelFor(0, 4, (i) => {
    cells[i] = cells[i]! * 10; // each task changes its own cell
    sums[i] = cells.reduce((a, b) => a + b, 0); // and reads the others from the snapshot
  });
  assert.deepEqual(cells, [10, 20, 30, 40]);
  assert.deepEqual(sums, [19, 28, 37, 46]);
}

/** A write-write conflict names the location and both tasks; the first writer keeps the location. */
export async function conflictNamed(dist: Distribution): Promise<void> {
  const outputs = new Array<number>(10).fill(0);
  const tasks = Array.from({ length: 10 }, (_, i) => dist.task(() => { outputs[i === 7 ? 3 : i] = i; }));
  await dist.start(tasks);
  await tasks[3]!.result;
  await assert.rejects(tasks[7]!.result, (e: WriteConflictError) => {
    assert.equal(e.message, 'write-write conflict: outputs[3] written by task 3 and task 7');
    return true;
  });
  assert.equal(outputs[3], 3, 'the first writer keeps the location');
}

/** Randomized: every write-write conflict is detected, none for disjoint locations. */
export async function randomizedConflicts(dist: Distribution, rounds = 6): Promise<void> {
  const rng = new Rng(13);
  let conflictsSeen = 0;
  let disjointRounds = 0;
  for (let round = 0; round < rounds; round++) {
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
    const tasks = plan.map((writes, task) => dist.task(() => {
      for (const w of writes) {
        if (w.where === 0) obj['abcd'[w.at % 4]!] = task + 1;
        else if (w.where === 1 && w.at < 12) arr[w.at] = task + 1;
        else if (w.where === 2 && w.at < 12) typed[w.at] = task + 1;
        else if (w.where === 3) map.set(w.at, task + 1);
      }
    }));
    await dist.start(tasks);
    const reported = new Set<string>();
    for (const t of tasks) {
      await t.result.catch((e: unknown) => {
        assert.ok(e instanceof WriteConflictError, String(e));
        for (const c of e.conflicts) reported.add(`${c.location} by ${c.tasks[0]} and ${c.tasks[1]}`);
      });
    }
    assert.deepEqual([...reported].sort(), [...expected].sort(), `round ${round}`);
    // Every location ends with its first writer's value.
    for (const [loc, list] of writers) {
      const value = loc.startsWith('obj.') ? obj[loc.slice(4)] : loc.startsWith('map.') ? map.get(Number(loc.slice(8, -1))) : (loc.startsWith('arr') ? arr : typed)[Number(loc.slice(loc.indexOf('[') + 1, -1))];
      assert.equal(value, list[0]! + 1, `${loc} holds its first writer's value (round ${round})`);
    }
    conflictsSeen += expected.size;
    if ([...writers.values()].some((l) => l.length === 1)) disjointRounds++;
  }
  assert.ok(conflictsSeen > 10 && disjointRounds === rounds, 'the rounds had both conflicting and disjoint writes');
}
