// Capture: free variables through [[Scopes]], identity, and the known failure cases of closure
// serialization on Node (Pulumi's list): each works or fails with a clear error naming the variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Capture, CaptureError } from '../../../src/frameworks/service/capture.js';
import { freeVariables } from '../../../src/frameworks/service/free-variables.js';
import { VmSandbox } from '../../../src/frameworks/service/vm-sandbox.js';
import { BatchApplier } from '../../../src/frameworks/service/apply-changes.js';
import type { TaskOutcome } from '../../../src/frameworks/service/graph-format.js';

function factorize(n: number): number {
  for (let k = 2; k * k <= n; k++) if (n % k === 0) return k;
  return n;
}

/** Captures closures, runs them in a vm sandbox, applies their writes; returns their results. */
function roundTrip(...fns: (() => unknown)[]): unknown[] {
  const cap = new Capture();
  fns.forEach((f) => cap.addTask(f));
  cap.done();
  const sandbox = new VmSandbox(JSON.stringify(cap.graph), cap.graph.codes);
  const applier = new BatchApplier(cap);
  return fns.map((_f, i) => {
    const o = JSON.parse(sandbox.run(i)) as TaskOutcome;
    if (!o.ok) throw new Error(`${o.err?.name}: ${o.err?.message}`);
    return applier.apply(i, o);
  });
}

function refusal(fn: () => unknown): CaptureError {
  try {
    new Capture().addTask(fn);
  } catch (e) {
    assert.ok(e instanceof CaptureError, `expected a CaptureError, got ${String(e)}`);
    return e;
  }
  assert.fail('the capture was not refused');
}

test('free variables: parameters, var hoisting, block scopes, catch, classes, labels and properties are not free', () => {
  const fv = freeVariables('function f(x, {y = z} = {}) { var q = 1; let w = x; for (const i of arr) { q += i; } try { g(); } catch (e) { e.m; } return q + w + y + f.length + arguments.length + o.p + { k: 1 }.k; }');
  assert.deepEqual([...fv.free.keys()].sort(), ['arr', 'g', 'o', 'z']);
  assert.deepEqual([...freeVariables('(i) => { outputs[i] = factorize(inputs[i]); total++; }').assigned.keys()], ['total']);
  assert.deepEqual([...freeVariables('class A extends B { static s = C; m() { return new A() + D; } }').free.keys()], ['B', 'C', 'D']);
  assert.equal(freeVariables('m(a) { return this.x + a; }').form, 'method');
  assert.ok(freeVariables('() => this.x').lexicalThis !== undefined);
});

test('module functions are captured transitively; results match a local run', () => {
  const n = 1_000_003 * 7;
  const [r] = roundTrip(() => factorize(n));
  assert.equal(r, factorize(n));
});

test('two closures sharing one object see one object; cycles and identity survive', () => {
  const shared: { hits: number[]; self?: unknown } = { hits: [0, 0] };
  shared.self = shared;
  const [a, b] = roundTrip(() => {
    shared.hits[0] = 1;
    return shared.self === shared;
  }, () => {
    shared.hits[1] = 2;
    return shared;
  });
  assert.equal(a, true);
  assert.equal(b, shared, 'a returned captured object comes back as the client object itself');
  assert.deepEqual(shared.hits, [1, 2]);
});

test('typed arrays, Maps, Sets, Dates, class instances and Symbols travel and change in place', () => {
  class Point {
    constructor(public x: number, public y: number) {}
    norm() { return Math.hypot(this.x, this.y); }
  }
  const p = new Point(3, 4);
  const f = new Float64Array([1, 2, 3]);
  const m = new Map<string, number>([['a', 1]]);
  const s = new Set([1]);
  const d = new Date(0);
  const tag = Symbol('tag');
  const holder: Record<symbol, number> = { [tag]: 1 };
  const [r] = roundTrip(() => {
    f[1] = p.norm();
    m.set('b', 2);
    m.delete('a');
    s.add(2);
    d.setTime(1000);
    holder[tag] = 2;
    p.x = 6;
    return { made: [p, new Point(1, 1)] };
  });
  assert.deepEqual([...f], [1, 5, 3]);
  assert.deepEqual([...m], [['b', 2]]);
  assert.deepEqual([...s], [1, 2]);
  assert.equal(d.getTime(), 1000);
  assert.equal(holder[tag], 2);
  assert.equal(p.x, 6);
  const made = (r as { made: Point[] }).made;
  assert.equal(made[0], p);
  assert.ok(made[1] instanceof Point, 'a new instance of a captured class has the client class');
  assert.equal(made[1]!.norm(), Math.SQRT2);
});

test('aliases of builtins (Array.isArray, Math.max) travel by name', () => {
  const isArray = Array.isArray;
  const max = Math.max;
  assert.deepEqual(roundTrip(() => [isArray([]), max(1, 5)]), [[true, 5]]);
});

test('getters are never run during capture; they are captured as functions', () => {
  const state = { calls: 0 };
  const o = { get value() { state.calls++; return 42; } };
  const [r] = roundTrip(() => o.value);
  assert.equal(r, 42, 'the getter ran remotely');
  assert.equal(state.calls, 1, 'the getter ran once, in the sandbox (a run during capture would make it 2)');
});

test('refused: I/O, promisify(fs.readFile), timers, Atomics.wait, eval/Function, undeclared globals, native and bound functions', () => {
  const readFile = promisify(fs.readFile);
  const cases: [() => unknown, string, RegExp][] = [
    [() => fs.readFileSync('x'), 'fs', /Node\.js \(node:fs\)/],
    [() => readFile('x'), 'readFile', /Node\.js/],
    [() => setTimeout(() => 1, 1), 'setTimeout', /timers/],
    [() => Atomics.wait(new Int32Array(1), 0, 0), 'Atomics', /synchronization/],
    [() => Function('return 1')(), 'Function', /dynamic code/],
    [() => process.pid, 'process', /host access/],
    [() => fetch('http://x'), 'fetch', /I\/O/],
    // @ts-expect-error an undeclared global on purpose
    [() => notDeclaredAnywhere + 1, 'notDeclaredAnywhere', /undeclared global/],
    [factorize.bind(null, 3), 'task 0', /bound function/],
  ];
  for (const [fn, variable, reason] of cases) {
    const e = refusal(fn);
    assert.match(e.message, reason, e.message);
    assert.ok(e.variable.startsWith(variable), `${e.message} names ${variable}`);
    if (variable !== 'task 0') assert.match(e.at, /capture\.test\.ts:\d+/, `${e.message} gives file:line`);
  }
});

test('refused: assigning a captured variable, `this` of the surrounding code', () => {
  let total = 0;
  assert.match(refusal(() => { total += 1; }).message, /`total` .*assign a captured variable/);
  void total;
  const self = { run() { return () => this; } };
  assert.match(refusal(self.run()).message, /`this`/);
});

test('size: a warning above the warning size, a refusal above the maximum', () => {
  const big = new Float64Array(200_000); // 1.6 MB
  const warnings: string[] = [];
  const cap = new Capture({ warnBytes: 1e6, onWarning: (m) => warnings.push(m) });
  cap.addTask(() => big.length);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /exceeds 1 MB/);
  assert.throws(() => new Capture({ maxBytes: 1e6 }).addTask(() => big.length), /`big`.*maximum of 1000000 bytes/);
});

test('Node 20 primordials: an internal function whose source reads primordials is refused by its node: script, by name', () => {
  const normalize = path.posix.normalize;
  const free = [...freeVariables(Function.prototype.toString.call(normalize)).free.keys()];
  assert.ok(free.some((n) => /^(String|Array|Object|RegExp|Function|Number)[A-Z]/.test(n)), `its source reads primordials (${free.join(', ')}): a capture of its source would reach them`);
  const e = refusal(() => normalize('a//b'));
  assert.equal(e.variable, 'normalize');
  assert.match(e.message, /normalize is part of Node\.js \(node:path\)/);
  assert.match(e.at, /capture\.test\.ts:\d+/);
});

test('Symbols: registered symbols keep their identity across realms', () => {
  const key = Symbol.for('tidepool.test');
  const [r] = roundTrip(() => Symbol.keyFor(key));
  assert.equal(r, 'tidepool.test');
});
