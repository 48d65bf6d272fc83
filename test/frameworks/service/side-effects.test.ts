// Side effects (seed 002 §3.3) through Distribution.local() and through the real HTTPS service with
// isolated-vm sandboxes (the same test bodies, side-effect-cases.ts): nested objects, arrays, typed
// arrays, Maps, Sets, new objects, static class fields and function properties arrive in place;
// snapshot isolation; write-write conflicts are reported naming the location and both tasks
// (randomized), none for disjoint writes, and a conflicting task applies nothing; console output comes
// back bounded; completed() streams results and cancels the rest on break. Keys that could reach a
// prototype are refused; a local worker's exhausted heap fails only its batch.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Distribution } from '../../../src/frameworks/service/distribution.js';
import type { ConsoleLine } from '../../../src/frameworks/service/batch-settlement.js';
import { Capture } from '../../../src/frameworks/service/capture.js';
import { BatchApplier } from '../../../src/frameworks/service/apply-changes.js';
import { conflictNamed, consoleComesBack, nestedWritesArrive, randomizedConflicts, resultsAsTheyFinish, snapshotIsolation, staticWritesComeBack } from './side-effect-cases.js';
import { startHttpsService, type HttpsService } from './https-service.js';

const distributions: [string, () => Promise<{ dist: Distribution; printed: ConsoleLine[]; close(): Promise<void> }>][] = [
  ['Distribution.local()', async () => {
    const printed: ConsoleLine[] = [];
    const dist = Distribution.local({ workers: 2, onConsole: (l) => printed.push(l) });
    return { dist, printed, close: () => dist.close() };
  }],
  ['the HTTPS service (isolated-vm)', (): Promise<HttpsService> => startHttpsService()],
];

for (const [name, open] of distributions) {
  describe(name, () => {
    let d: { dist: Distribution; printed: ConsoleLine[]; close(): Promise<void> };
    before(async () => { d = await open(); });
    after(() => d.close());
    test('nested objects, arrays, typed arrays, Maps, Sets and new objects arrive in place', () => nestedWritesArrive(d.dist));
    test('snapshot isolation: every task reads the batch start state, not another task’s writes', () => snapshotIsolation(d.dist));
    test('a write-write conflict names the location and both tasks; the later task has none of its writes applied', () => conflictNamed(d.dist));
    test('randomized: every write-write conflict is detected, none for disjoint locations, conflicting tasks apply nothing', () => randomizedConflicts(d.dist));
    test('static class fields and function properties written by a task come back', () => staticWritesComeBack(d.dist));
    test('console output of a task comes back with it, bounded', () => consoleComesBack(d.dist, d.printed));
    test('completed() yields tasks as they finish; leaving the loop cancels the rest', () => resultsAsTheyFinish(d.dist));
  });
}

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
