// The isolated-vm sandbox in child processes: escapes, infinite loops, memory bombs and deep
// recursion are contained; a process that dies is replaced; a poisonous task fails after its retries.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Capture } from '../../../src/frameworks/service/capture.js';
import { SandboxPool } from '../../../src/frameworks/service/sandbox-pool.js';
import type { TaskOutcome } from '../../../src/frameworks/service/graph-format.js';

const pool = new SandboxPool({ timeoutMs: 1_000, memoryMb: 32, retries: 1 });
after(() => pool.close());

async function runAll(key: string, ...fns: (() => unknown)[]): Promise<TaskOutcome[]> {
  const cap = new Capture();
  fns.forEach((f) => cap.addTask(f));
  cap.done();
  const out = await pool.run(key, JSON.stringify(cap.graph), cap.graph.codes, fns.map((_f, i) => i));
  return fns.map((_f, i) => JSON.parse(out.get(i)!) as TaskOutcome);
}

test('escapes through the global object, constructor.constructor and eval find nothing of the host', async () => {
  // The global object is reached dynamically (a sloppy-mode function's `this`: made with Function, so that
  // it is not this strict module's code and stays sloppy in the sandbox), past capture's static checks.
  const sloppyThis = new Function('return (function () { return this; })()') as () => Record<string, unknown>;
  const probe = {
    names: ['process', 'require', 'Buffer', 'fetch', 'setTimeout', 'eval'],
    run() {
      const glob = sloppyThis();
      return this.names.map((n) => typeof glob[n]).join(',');
    },
  };
  const outcomes = await runAll('escapes',
    () => probe.run(),
    () => (({}).constructor.constructor('return this'))(),
    () => (() => 0).constructor('return 1')(),
  );
  assert.equal(outcomes[0]!.ok, true);
  assert.equal(outcomes[0]!.v, 'undefined,undefined,undefined,undefined,undefined,undefined');
  assert.equal(outcomes[1]!.ok, false);
  assert.match(outcomes[1]!.err!.message, /dynamic code/);
  assert.match(outcomes[2]!.err!.message, /dynamic code/);
});

test('import() inside a task is refused: no module loader in the isolate', async () => {
  // Written as a method source so that tsx does not rewrite the dynamic import.
  const holder = { load() { return import('node:fs'); } };
  const [o] = await runAll('import', () => holder.load());
  assert.equal(o!.ok, false);
  assert.match(`${o!.err!.name}: ${o!.err!.message}`, /not supported|import|module/i, "isolated-vm has no module loader: import() is refused");
});

test('an infinite loop stops at the time limit; a memory bomb at the memory limit; deep recursion is a RangeError; the sandbox keeps serving', async () => {
  const outcomes = await runAll('limits',
    () => { for (;;) { /* spin */ } },
    () => { const keep: number[][] = []; for (;;) keep.push(new Array(100_000).fill(1)); },
    () => { const down = (n: number): number => down(n + 1) + 1; return down(0); },
    () => 6 * 7,
  );
  assert.equal(outcomes[0]!.err?.name, 'TimeoutError');
  assert.equal(outcomes[1]!.err?.name, 'MemoryLimitError');
  assert.equal(outcomes[2]!.err?.name, 'RangeError');
  assert.equal(outcomes[3]!.ok, true);
  assert.equal(outcomes[3]!.v, 42);
});

test('a task whose sandbox process dies fails after its retry; the rest of its chunk completes in a replacement', async () => {
  const own = new SandboxPool({ timeoutMs: 120_000, retries: 1 });
  try {
    const cap = new Capture();
    const spin = { n: 1e13 };
    cap.addTask(() => 1);
    cap.addTask(() => { let x = 0; for (let i = 0; i < spin.n; i++) x += i; return x; }); // runs until killed
    cap.addTask(() => 3);
    cap.done();
    let first = false;
    let kills = 0;
    const killed = new Set<number>();
    // Kill whatever process runs task 1: the first after it reported task 0, then its replacement.
    const killer = setInterval(() => {
      if (!first || kills >= 2) return;
      for (const child of own.processes()) {
        if (child.pid === undefined || killed.has(child.pid)) continue;
        killed.add(child.pid);
        kills++;
        child.kill('SIGKILL');
      }
    }, 10);
    const out = await own.run('poison', JSON.stringify(cap.graph), cap.graph.codes, [0, 1, 2], (i) => { if (i === 0) first = true; });
    clearInterval(killer);
    const o = [0, 1, 2].map((i) => JSON.parse(out.get(i)!) as TaskOutcome);
    assert.equal(o[0]!.v, 1);
    assert.equal(o[1]!.ok, false);
    assert.equal(o[1]!.err!.name, 'SandboxCrash');
    assert.match(o[1]!.err!.message, /SIGKILL.*2 time\(s\)/);
    assert.equal(o[2]!.v, 3, 'the task after the poisonous one ran in a replacement process');
    assert.equal(own.started, 3);
  } finally {
    own.close();
  }
});
