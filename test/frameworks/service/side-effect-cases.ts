/**
 * Side effects (seed 002 §3.3) as test bodies over any Distribution: side-effects.test.ts runs them
 * through Distribution.local() and through the HTTPS service with isolated-vm sandboxes,
 * service-zookeeper.test.ts through the service on node processes.
 */
import assert from 'node:assert/strict';
import type { ConsoleLine, Distribution } from '../../../src/frameworks/service/index.js';
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

/** The order in which tasks settled: each task's result settles when its outcome is applied, in that order. */
function settleOrder(tasks: { result: Promise<unknown> }[]): number[] {
  const order: number[] = [];
  tasks.forEach((t, i) => t.result.then(() => order.push(i), () => order.push(i)));
  return order;
}

/**
 * A write-write conflict names the location and both tasks; the task applied first keeps the location,
 * and none of the other task's writes are applied (atomic effects).
 */
export async function conflictNamed(dist: Distribution): Promise<void> {
  const outputs = new Array<number>(10).fill(0);
  const extra = new Array<number>(10).fill(0);
  const tasks = Array.from({ length: 10 }, (_, i) => dist.task(() => {
    outputs[i === 7 ? 3 : i] = i;
    extra[i] = i + 100;
  }));
  const order = settleOrder(tasks);
  await dist.start(tasks);
  await Promise.allSettled(tasks.map((t) => t.result));
  const [kept, lost] = order.indexOf(3) < order.indexOf(7) ? [3, 7] : [7, 3];
  await tasks[kept]!.result;
  await assert.rejects(tasks[lost]!.result, (e: WriteConflictError) => {
    assert.ok(e instanceof WriteConflictError);
    assert.equal(e.message, `write-write conflict: outputs[3] written by task ${kept} and task ${lost}; none of task ${lost}'s writes were applied`);
    assert.deepEqual(e.conflicts, [{ location: 'outputs[3]', tasks: [`task ${kept}`, `task ${lost}`] }]);
    return true;
  });
  assert.equal(outputs[3], kept, 'the task applied first keeps the location');
  assert.equal(extra[kept], kept + 100);
  assert.equal(extra[lost], 0, 'none of the conflicting task\'s writes were applied, not even those without a conflict');
}

/**
 * Randomized: every write-write conflict is detected, none for disjoint locations, and a task with a
 * conflict has none of its writes applied (so it holds no location): checked against a replay of the
 * tasks in the order they were applied.
 */
export async function randomizedConflicts(dist: Distribution, rounds = 6): Promise<void> {
  const rng = new Rng(13);
  let conflictsSeen = 0;
  let cleanTasks = 0;
  for (let round = 0; round < rounds; round++) {
    const obj: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
    const arr = new Array<number>(12).fill(0);
    const typed = new Int32Array(12);
    const map = new Map<number, number>();
    const plan = Array.from({ length: 8 }, () => Array.from({ length: 3 }, () => ({ where: rng.int(0, 3), at: rng.int(0, round % 2 === 0 ? 11 : 39) })));
    const names = ['obj', 'arr', 'typed', 'map'];
    const locations = plan.map((writes) => [...new Set(writes.flatMap((w) => {
      if (w.at >= 12 && (w.where === 1 || w.where === 2)) return []; // out of range: no write
      return [w.where === 0 ? `obj.${'abcd'[w.at % 4]}` : w.where === 3 ? `map.get(${w.at})` : `${names[w.where]}[${w.at}]`];
    }))]);
    const tasks = plan.map((writes, task) => dist.task(() => {
      for (const w of writes) {
        if (w.where === 0) obj['abcd'[w.at % 4]!] = task + 1;
        else if (w.where === 1 && w.at < 12) arr[w.at] = task + 1;
        else if (w.where === 2 && w.at < 12) typed[w.at] = task + 1;
        else if (w.where === 3) map.set(w.at, task + 1);
      }
    }));
    const order = settleOrder(tasks);
    await dist.start(tasks);
    const reported = new Map<number, string[]>();
    for (const [task, t] of tasks.entries()) {
      await t.result.catch((e: unknown) => {
        assert.ok(e instanceof WriteConflictError, String(e));
        reported.set(task, e.conflicts.map((c) => `${c.location} by ${c.tasks[0]} and ${c.tasks[1]}`).sort());
      });
    }
    // The replay: in the order applied, a task conflicts where an earlier applied task holds one of its locations.
    const holder = new Map<string, number>();
    for (const task of order) {
      const conflicts = locations[task]!.filter((loc) => holder.has(loc)).map((loc) => `${loc} by task ${holder.get(loc)} and task ${task}`).sort();
      assert.deepEqual(reported.get(task) ?? [], conflicts, `round ${round}, task ${task} (applied as number ${order.indexOf(task)})`);
      if (conflicts.length === 0) {
        for (const loc of locations[task]!) holder.set(loc, task);
        cleanTasks++;
      }
      conflictsSeen += conflicts.length;
    }
    // Every location holds the value of the task that holds it; the others are untouched.
    const valueAt = (loc: string) => (loc.startsWith('obj.') ? obj[loc.slice(4)] : loc.startsWith('map.') ? map.get(Number(loc.slice(8, -1))) : (loc.startsWith('arr') ? arr : typed)[Number(loc.slice(loc.indexOf('[') + 1, -1))]);
    for (const loc of new Set(locations.flat())) {
      const h = holder.get(loc);
      assert.equal(valueAt(loc), h === undefined ? (loc.startsWith('map.') ? undefined : 0) : h + 1, `${loc} (round ${round})`);
    }
  }
  assert.ok(conflictsSeen > 10 && cleanTasks > rounds, 'the rounds had both conflicting and clean tasks');
}

/** Writes to static state come back: a class's static fields and a function's properties, like object fields. */
export async function staticWritesComeBack(dist: Distribution): Promise<void> {
  class Counter {
    static hits = 0;
    static label = 'none';
    static bump(): number {
      return ++this.hits;
    }
  }
  const tally = Object.assign(function tally(): void { /* a function with state */ }, { count: 0 });
  const t = dist.task(() => {
    Counter.hits++;
    Counter.label = 'set remotely';
    tally.count = 7;
    (tally as unknown as Record<string, unknown>).added = [1, 2];
    return Counter.bump();
  });
  await dist.start([t]);
  assert.equal(await t.result, 2);
  assert.equal(Counter.hits, 2, 'a static primitive field came back (Counter.hits++ and this.hits++ in a static method)');
  assert.equal(Counter.label, 'set remotely');
  assert.equal(tally.count, 7, 'a function property came back');
  assert.deepEqual((tally as unknown as Record<string, unknown>).added, [1, 2], 'a property added to a function came back');
  // Two tasks writing one static field conflict like any other location.
  const [a, b] = [dist.task(() => { Counter.hits = 10; }), dist.task(() => { Counter.hits = 20; })];
  await dist.start([a, b]);
  const results = await Promise.allSettled([a.result, b.result]);
  const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
  assert.equal(failed.length, 1);
  assert.match(String(failed[0]!.reason), /write-write conflict: Counter\.hits written by task [01] and task [01]/);
  const hits: number = Counter.hits;
  assert.ok(hits === 10 || hits === 20);
}

/** `console` in a task: its lines come back with the task, in order, bounded, and are printed prefixed by the task (`printed`: what the client's onConsole heard). */
export async function consoleComesBack(dist: Distribution, printed: ConsoleLine[]): Promise<void> {
  printed.length = 0;
  const tasks = [
    dist.task(() => { console.log('hello from', 3, { a: [1, 2] }); console.warn('careful: %d%%', 50); return 1; }),
    dist.task(() => { for (let i = 0; i < 5000; i++) console.log(`line ${i} ${'x'.repeat(40)}`); }),
    dist.task(() => { console.error('about to fail'); throw new Error('failed after printing'); }),
  ];
  await dist.start(tasks);
  await tasks[0]!.result;
  assert.deepEqual(tasks[0]!.console, [['log', 'hello from 3 { a: [ 1, 2 ] }'], ['warn', 'careful: 50%']]);
  await tasks[1]!.result;
  const kept = tasks[1]!.console;
  assert.ok(kept.length > 100 && kept.length < 5000, `${kept.length} lines kept of 5000`);
  assert.equal(kept[0]![1], `line 0 ${'x'.repeat(40)}`);
  assert.ok(kept.reduce((n, [, text]) => n + text.length, 0) <= 64 * 1024, 'within 64 KiB');
  await assert.rejects(tasks[2]!.result, /failed after printing/);
  assert.deepEqual(tasks[2]!.console, [['error', 'about to fail']], 'a failed task\'s lines come back too');
  assert.deepEqual(printed.filter((l) => l.task === 'task 0'), [{ task: 'task 0', level: 'log', text: 'hello from 3 { a: [ 1, 2 ] }' }, { task: 'task 0', level: 'warn', text: 'careful: 50%' }]);
  const last = printed.filter((l) => l.task === 'task 1').at(-1)!;
  assert.match(last.text, /^… \d+ more console line\(s\) dropped \(a task keeps at most 64 KiB of console output\)$/);
}

/**
 * Results as they finish: `completed` yields a quick task while a long one still runs, side effects applied
 * at each yield; leaving the loop cancels the rest, whose effects are never applied.
 */
export async function resultsAsTheyFinish(dist: Distribution): Promise<void> {
  const out = new Array<number>(4).fill(0);
  const spin = (ms: number) => { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x; };
  const tasks = [0, 1, 2, 3].map((i) => dist.task(() => {
    if (i === 0) spin(3_000);
    out[i] = i + 1;
    return i;
  }));
  const seen: number[] = [];
  for await (const t of dist.completed(tasks)) {
    const i = await t.result;
    seen.push(i);
    assert.equal(out[i], i + 1, 'the task\'s effects are applied when it is yielded');
    if (seen.length === 1) assert.equal(tasks[0]!.state, undefined, 'the first result came while the long task was still running');
    if (seen.length === 3) break;
  }
  assert.ok(!seen.includes(0), `the long task was not among the first three (${seen.join(', ')})`);
  await assert.rejects(tasks[0]!.result, { name: 'CancelledError', message: 'task 0 was cancelled' });
  assert.equal(tasks[0]!.state, 'cancelled');
  assert.equal(out[0], 0, 'a cancelled task\'s effects are never applied');
}
