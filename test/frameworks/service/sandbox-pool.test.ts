// The sandbox pool with the outcomes of a request sent together (as batches use it): one message
// per request instead of one per task, and a poisonous task still fails after its retries although a
// death while several outcomes were owed cannot be blamed on any task (those run again one by one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { Capture } from '../../../src/frameworks/service/capture.js';
import { SandboxPool } from '../../../src/frameworks/service/sandbox-pool.js';
import type { TaskOutcome } from '../../../src/frameworks/service/graph-format.js';

function captured(...fns: (() => unknown)[]) {
  const cap = new Capture();
  fns.forEach((f) => cap.addTask(f));
  cap.done();
  return { json: JSON.stringify(cap.graph), codes: cap.graph.codes, indexes: fns.map((_f, i) => i) };
}

const values = (outs: Map<number, string>, indexes: number[]) => indexes.map((i) => JSON.parse(outs.get(i)!) as TaskOutcome);

test('the outcomes of a request come in one message together, one message each otherwise', async () => {
  const own = new SandboxPool({ timeoutMs: 60_000 });
  try {
    const { json, codes, indexes } = captured(() => 1, () => 2, () => 3, () => 4, () => 5);
    await own.run('start', json, codes, [0]); // the process starts; count its messages from now on
    let messages = 0;
    for (const child of own.processes()) child.on('message', () => messages++);
    const together = await own.run('together', json, codes, indexes, undefined, {}, [], { together: true });
    assert.deepEqual(values(together, indexes).map((o) => o.v), [1, 2, 3, 4, 5]);
    assert.equal(messages, 1, 'one message for the five outcomes');
    messages = 0;
    const each = await own.run('each', json, codes, indexes);
    assert.deepEqual(values(each, indexes).map((o) => o.v), [1, 2, 3, 4, 5]);
    assert.equal(messages, 6, 'one message per outcome, then the end of the request');
    assert.equal(own.started, 1);
  } finally {
    own.close();
  }
});

/** Kills the pool's processes as they appear, `count` of them. */
function killer(pool: SandboxPool, count: number): { stop(): void } {
  const killed = new Set<ChildProcess>();
  const timer = setInterval(() => {
    for (const child of pool.processes()) {
      if (killed.size >= count || killed.has(child)) continue;
      killed.add(child);
      child.kill('SIGKILL');
    }
  }, 10);
  return { stop: () => clearInterval(timer) };
}

test('together, a death while several outcomes were owed blames no task: with no retries the poisonous task fails, the innocent ones complete', async () => {
  const own = new SandboxPool({ timeoutMs: 120_000, retries: 0 });
  const spin = { n: 1e13 };
  const { json, codes, indexes } = captured(
    () => { let x = 0; for (let i = 0; i < spin.n; i++) x += i; return x; }, // runs until killed
    () => 2,
    () => 3,
  );
  // The first death (three owed) is blamed on none; the second, one message per outcome, on task 0.
  const kills = killer(own, 2);
  try {
    const o = values(await own.run('poison-together', json, codes, indexes, undefined, {}, [], { together: true }), indexes);
    assert.equal(o[0]!.ok, false);
    assert.equal(o[0]!.err!.name, 'SandboxCrash');
    assert.match(o[0]!.err!.message, /SIGKILL.*1 time\(s\)/);
    assert.deepEqual([o[1]!.ok, o[1]!.v, o[2]!.ok, o[2]!.v], [true, 2, true, 3], 'the tasks after the poisonous one ran in a replacement');
    assert.equal(own.started, 3);
  } finally {
    kills.stop();
    own.close();
  }
});

test('together, a death while a single outcome was owed is blamed on that task', async () => {
  const own = new SandboxPool({ timeoutMs: 120_000, retries: 1 });
  const spin = { n: 1e13 };
  const { json, codes } = captured(() => { let x = 0; for (let i = 0; i < spin.n; i++) x += i; return x; });
  const kills = killer(own, 2);
  try {
    const [o] = values(await own.run('poison-alone', json, codes, [0], undefined, {}, [], { together: true }), [0]);
    assert.equal(o!.err!.name, 'SandboxCrash');
    assert.match(o!.err!.message, /2 time\(s\)/);
    assert.equal(own.started, 2);
  } finally {
    kills.stop();
    own.close();
  }
});

test('a lane queues its next request on the same process; when that process dies, the request queued behind the running one is blamed for nothing', async () => {
  const own = new SandboxPool({ timeoutMs: 120_000, retries: 0 });
  const spin = { n: 1e13 };
  const { json, codes } = captured(
    () => 1,
    () => 2,
    () => { let x = 0; for (let i = 0; i < spin.n; i++) x += i; return x; }, // runs until killed
    () => 4,
  );
  const lane = {};
  try {
    const first = own.run('lane', json, codes, [0], undefined, {}, [], { together: true, lane });
    const second = own.run('lane', json, codes, [1], undefined, {}, [], { together: true, lane });
    assert.deepEqual([...values(await first, [0]), ...values(await second, [1])].map((o) => o.v), [1, 2]);
    assert.equal(own.started, 1, 'both requests went to one process');
    const kills = killer(own, 1);
    try {
      const poisoned = own.run('lane', json, codes, [2], undefined, {}, [], { together: true, lane });
      const queued = own.run('lane', json, codes, [3], undefined, {}, [], { together: true, lane });
      const [p] = values(await poisoned, [2]);
      assert.equal(p!.err!.name, 'SandboxCrash', 'the running task, alone in its request, is blamed');
      assert.deepEqual(values(await queued, [3]).map((o) => o.v), [4], 'the queued task ran in the replacement');
      assert.equal(own.started, 2);
    } finally {
      kills.stop();
    }
  } finally {
    own.close();
  }
});

test('a cancelled task is not run, and a process running only cancelled tasks is killed: its run ends without their outcomes', async () => {
  const own = new SandboxPool({ timeoutMs: 600_000 });
  try {
    const { json, codes } = captured(() => { for (;;) { /* spins until killed */ } }, () => 'skipped', () => 'kept');
    const first = own.run('cancel', json, codes, [0]);
    const [child] = own.processes(); // started by run, at once
    const exited = new Promise<string | null>((resolve) => child!.once('exit', (_code, signal) => resolve(signal)));
    own.cancel('cancel', [0, 1]);
    assert.equal(await exited, 'SIGKILL', 'the process running the cancelled task was killed');
    assert.equal((await first).size, 0, 'no outcome for the cancelled task');
    const rest = await own.run('cancel', json, codes, [1, 2]);
    assert.deepEqual([...rest.keys()], [2], 'a cancelled task is not run');
    assert.equal((JSON.parse(rest.get(2)!) as TaskOutcome).v, 'kept');
  } finally {
    own.close();
  }
});
