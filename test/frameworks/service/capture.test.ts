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
  const sandbox = new VmSandbox(JSON.stringify(cap.graph), cap.graph.codes, 0, [], cap.blobs);
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
  const e = refusal(() => { total += 1; });
  assert.match(e.message, /`total` \(test\/frameworks\/service\/capture\.test\.ts:\d+\): a task cannot assign a captured variable/);
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

let moduleCounter = 0;
/** A module function assigning a module-level `let`: reached through a task, refused naming this file's line. */
function bumpModuleCounter(): number {
  return ++moduleCounter;
}

test('static writes: a module binding assigned by the task or by a function it calls is refused with file:line', () => {
  for (const fn of [() => { moduleCounter = 5; }, () => bumpModuleCounter()]) {
    const e = refusal(fn);
    assert.equal(e.variable, 'moduleCounter');
    assert.match(e.at, /^test\/frameworks\/service\/capture\.test\.ts:\d+$/);
    assert.match(e.message, /a task cannot assign a captured variable \(its new value could not come back\)/);
  }
});

test('static writes: class statics and function properties come back; writes that could not are refused with file:line', () => {
  class Registry {
    static count = 0;
  }
  const hook = Object.assign(() => 1, { calls: 0 });
  const [r] = roundTrip(() => { Registry.count += 2; hook.calls = 3; return Registry.count; });
  assert.equal(r, 2);
  assert.equal(Registry.count, 2);
  assert.equal(hook.calls, 3);
  const cases: [() => unknown, string, RegExp][] = [
    [() => { (Math as unknown as Record<string, unknown>).tau = 6.28; }, 'Math', /cannot write to Math\.tau: `Math` is a built-in/],
    [() => { (Array.prototype as unknown as Record<string, unknown>).last = 1; }, 'Array', /cannot write to Array\.prototype\.last/],
    [() => { (Registry.prototype as unknown as Record<string, unknown>).tag = 'x'; }, 'Registry', /cannot write to Registry\.prototype\.tag: the prototype of Registry is made anew/],
  ];
  for (const [fn, variable, reason] of cases) {
    const e = refusal(fn);
    assert.equal(e.variable, variable);
    assert.match(e.message, reason);
    assert.match(e.at, /capture\.test\.ts:\d+/);
  }
  class Secret {
    static #uses = 0;
    static use(): number { return ++Secret.#uses; }
  }
  const s = refusal(() => Secret.use());
  assert.match(s.message, /class Secret has a static private field #uses/);
  assert.match(s.at, /capture\.test\.ts:\d+/);
  class Account {
    #balance = 10;
    get balance(): number { return this.#balance; }
  }
  const account = new Account();
  const a = refusal(() => account.balance);
  assert.equal(a.variable, 'account');
  assert.match(a.message, /an instance of class Account cannot be captured: it has private members \(#balance\)/);
  assert.match(a.at, /capture\.test\.ts:\d+/);
  // A class with private members that tasks only construct is fine: its constructor runs remotely.
  const [made] = roundTrip(() => new Account().balance);
  assert.equal(made, 10);
});

test('strict code stays strict remotely: a module function keeps its mode', () => {
  const [r] = roundTrip(() => (function (this: unknown) { return this; })() === undefined);
  assert.equal(r, true, 'this in a plain call is undefined, as in the module this test is');
});

test('a nested Distribution is refused where the program reaches it, naming the program\'s line', async () => {
  const { Distribution } = await import('../../../src/frameworks/service/distribution.js');
  const dist = Distribution.local({ workers: 1 });
  try {
    const e = refusal(() => dist.task(() => 1));
    assert.equal(e.variable, 'dist');
    assert.match(e.at, /^test\/frameworks\/service\/capture\.test\.ts:\d+$/);
    assert.match(e.message, /a Distribution is this program's connection to its workers and cannot be used inside a task/);
    const c = refusal(() => Distribution.local());
    assert.equal(c.variable, 'Distribution');
    assert.match(c.at, /capture\.test\.ts:\d+/);
    assert.doesNotMatch(c.message, /src\/frameworks\/service|dist\/src/);
  } finally {
    await dist.close();
  }
});

test('only what a closure reads travels: a closure reading obj.a does not ship obj.b', () => {
  const obj = { a: 3, b: new Float64Array(512 * 1024), c: 'x'.repeat(10_000) }; // b: 4 MB
  const cap = new Capture();
  cap.addTask(() => obj.a * 2);
  cap.done();
  assert.ok(cap.size < 1000, `captured ${cap.size} bytes`);
  assert.equal(cap.blobs.size, 0, 'the 4 MB array is not captured');
  assert.deepEqual(roundTrip(() => obj.a * 2), [6]);
  // Writes to a key read that way come back; a key the closure adds does too.
  const target = { hits: 1, big: new Float64Array(512 * 1024), extra: undefined as number | undefined };
  roundTrip(() => { target.hits++; target.extra = 5; });
  assert.equal(target.hits, 2);
  assert.equal(target.extra, 5);
  assert.equal(target.big.length, 512 * 1024, 'the property that did not travel is untouched');
  // Any other use takes the whole object: a method call (this), passing it, a computed key, and a getter.
  const withMethod = { big: new Float64Array(512 * 1024), n: 2, twice() { return this.n * 2; } };
  const key = 'n';
  const withGetter = { big: new Float64Array(512 * 1024), get n() { return this.big.length; } };
  for (const fn of [() => withMethod.twice(), () => JSON.stringify(withMethod).length, () => withMethod[key], () => withGetter.n]) {
    const full = new Capture();
    full.addTask(fn);
    full.done();
    assert.equal(full.blobs.size, 1, `${fn.toString()}: the whole object travels`);
  }
  // Two closures sharing the object: it travels with the union of what they read.
  const both = new Capture();
  both.addTask(() => obj.a);
  both.addTask(() => obj.c.length);
  both.done();
  assert.ok(both.size > 10_000 && both.blobs.size === 0, 'a and c travel, b does not');
});
