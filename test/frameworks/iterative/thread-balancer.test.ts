/**
 * The thread level as the kind drives it, under simulated time: reports are reads of the slots'
 * progress words (no message), a checkpoint tells the slow thread's range what to keep through its
 * budget word (no message either), and a thread that runs out asks to finish by §2.1's rules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThreadBalancer, type ThreadBalancerDeps } from '../../../src/frameworks/iterative/thread-balancer.js';
import type { Workers } from '../../../src/runtime/worker/worker-pool.js';

/** Slots whose progress words the test sets; with `stamped`, also when each last moved (s). */
function fakeWorkers(size: number, stamped?: number[]) {
  const progress = Array.from({ length: size }, () => 0);
  const posted: Array<{ slot: number; body: unknown }> = [];
  const budgets = new Map<number, number | undefined>();
  const workers = {
    size,
    progress: (slot: number) => progress[slot]!,
    post: (slot: number, body: unknown) => void posted.push({ slot, body }),
    setBudget: (slot: number, amount: number | undefined) => void budgets.set(slot, amount),
    ...(stamped ? { progressSample: (slot: number) => ({ units: progress[slot]!, atMs: 1000 * stamped[slot]! }) } : {}),
  } as unknown as Workers;
  return { workers, progress, posted, budgets };
}

/**
 * A ThreadBalancer over `workers` at the test's clock: blocks of 10, ruper's orders, an empty pool,
 * Δt_pc = 1 s, t_min = 0.5 s, ds_max = 0.1, no timers (the test ticks); `over` changes any of it.
 */
function balancer(workers: Workers, now: () => number, over: Partial<ThreadBalancerDeps> & { iterations: number }): ThreadBalancer {
  return new ThreadBalancer({
    workers, now, blockSize: 10, orders: true, poolEmpty: () => true,
    params: { checkpointInterval: 1, minRemaining: 0.5, maxDeviation: 0.1 }, setTimer: () => () => undefined, ...over,
  });
}

test('two threads at 300 and 100 it/s: the checkpoint has the slow one keep a quarter of what is left', () => {
  const { workers, progress, posted, budgets } = fakeWorkers(2);
  let now = 0;
  let pooled = 0;
  const b = balancer(workers, () => now, { iterations: 1000, poolEmpty: () => pooled === 0, params: { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 } });
  // The fan-out gave each thread 500 iterations (blocks 0-49 and 50-99).
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 50 });
  b.onTaskMessage(1, { type: 'it-range', lo: 50, hi: 100 });
  now = 0.5;
  progress[0] = 150;
  progress[1] = 50;
  b.tick(); // first reports are due at Δt_pc / 10: speeds 300 and 100 it/s
  assert.deepEqual(b.speeds(), [300, 100]);
  assert.equal(b.held(), 350 + 450);
  assert.equal(posted.length, 0, 'reports cost no message');
  now = 1;
  progress[0] = 300;
  progress[1] = 100;
  b.tick(); // reports at 1 s (same speeds), then the checkpoint: I_n = 400 done + 600 held
  // 600 left (by the reports: 1000 − 400) shared 3 : 1 → 450 and 150.
  assert.deepEqual(b.task.workers.map((w) => w.assigned), [300 + 450, 100 + 150]);
  // Slot 1 is at iteration 500 + 100 and keeps 150: its budget word says its range ends at block 75.
  assert.deepEqual([...budgets], [[1, 75]], 'only the slow range holds more than it keeps, told through its budget word');
  assert.equal(posted.length, 0, 'an assignment costs no message');
  // The task obeyed: it shed blocks 75-99 into the pool.
  b.onTaskMessage(1, { type: 'it-shed', lo: 75, hi: 100 });
  b.onTaskMessage(1, { type: 'it-range', lo: 60, hi: 75 });
  assert.equal(b.held(), 200 + 150 + 250, 'held: 200 and 150 in the ranges, 250 pooled');
  // Thread 0 runs out with blocks pooled: no finish request while there is work to take.
  pooled = 1;
  b.onSlotDone(0, true);
  assert.equal(b.task.workers[0]!.working(), true);
});

test('a thread that runs out with nothing pooled: refused while it did less than assigned, granted when nothing is left', () => {
  const { workers, progress, posted, budgets } = fakeWorkers(2);
  let now = 0;
  const b = balancer(workers, () => now, { iterations: 200 });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 10 });
  b.onTaskMessage(1, { type: 'it-range', lo: 10, hi: 20 });
  now = 0.1;
  progress[0] = 10;
  progress[1] = 10;
  b.tick();
  now = 1;
  progress[0] = 95;
  progress[1] = 90;
  b.tick(); // speeds 85/0.9 and 80/0.9; checkpoint: 200 − 185 = 15 left shared 7.73 : 7.27 → 8 and 7
  assert.deepEqual(b.task.workers.map((w) => w.assigned), [95 + 8, 90 + 7]);
  assert.deepEqual([posted, [...budgets]], [[], []], 'neither range holds a block more than it keeps');
  now = 1.05;
  progress[0] = 100;
  b.onSlotDone(0, true); // reported 100 < assigned 103: refused (a report was taken), the thread waits
  assert.equal(b.task.workers[0]!.working(), true);
  assert.equal(b.task.workers[0]!.done, 100);
  assert.equal(b.idleSince[0], 1.05);
  now = 1.1;
  progress[1] = 100;
  b.onSlotDone(1, true); // 100 ≥ 97 and nothing predicted left: granted
  assert.equal(b.task.workers[1]!.working(), false);
  now = 2;
  b.tick(); // checkpoint: everything is done → force-finish, and the waiting thread finishes
  assert.equal(b.task.workers[0]!.working(), false);
  assert.equal(b.task.finished, true);
});

/**
 * Two equal threads, each adding 50 iterations every 25 ms (2,000 it/s) as a task that reports
 * progress per chunk does, thread 1 a few ms behind thread 0; the balancer runs on its own timer,
 * which fires far more often. Returns the speeds after each timer tick and the balancer.
 */
function chunkyRun(stamps: boolean) {
  const stamped = [0, 0];
  const { workers, progress, budgets } = fakeWorkers(2, stamps ? stamped : undefined);
  let now = 0;
  let timer: { fn: () => void; at: number } | undefined;
  const b = new ThreadBalancer({
    workers, now: () => now, blockSize: 100, iterations: 20_000, orders: true, poolEmpty: () => true,
    params: { checkpointInterval: 0.1, minRemaining: 0.02, maxDeviation: 0.1 },
    setTimer: (fn, ms) => {
      timer = { fn, at: now + ms / 1000 };
      return () => (timer = undefined);
    },
  });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 100 });
  b.onTaskMessage(1, { type: 'it-range', lo: 100, hi: 200 });
  b.start();
  const speeds: Array<{ t: number; speeds: number[] }> = [];
  const offset = [0, 0.007];
  const step = (s: number, k: number) => 0.025 * k + offset[s]!;
  const next = [step(0, 1), step(1, 1)];
  while (now < 2) {
    now = Math.min(timer!.at, ...next);
    for (let s = 0; s < 2; s++) {
      if (now < next[s]!) continue;
      progress[s]! += 50;
      stamped[s] = now;
      next[s] = step(s, progress[s]! / 50 + 1);
    }
    if (timer && now >= timer.at) {
      const fire = timer.fn;
      timer = undefined;
      fire();
      speeds.push({ t: now, speeds: b.speeds() });
    }
  }
  return { b, speeds, budgets };
}

test('progress that moves a chunk at a time: each report is timed when it moved, speeds are exact, shares equal', () => {
  const { b, speeds, budgets } = chunkyRun(true);
  // Thread 1's first measure counts from the start, 7 ms before its first chunk began: 50 in 32 ms.
  for (const { t, speeds: sp } of speeds.filter((x) => x.t >= 0.06)) {
    for (const x of sp) assert.ok(Math.abs(x - 2000) < 1, `at ${t} s a thread's speed is its true 2,000 it/s: ${sp.join(', ')}`);
  }
  assert.ok(b.checkpoints >= 15, `checkpoints every 0.1 s: ${b.checkpoints}`);
  const [a0, a1] = b.task.workers.map((w) => w.assigned - w.done);
  assert.ok(Math.abs(a0! - a1!) <= 0.05 * Math.max(a0!, a1!), `equal threads keep equal shares: ${a0} and ${a1}`);
  assert.deepEqual([...budgets], [], 'no thread holds a block more than it keeps: no orders');
});

test('progress that moves a chunk at a time, no stamps: looks between chunks measure nothing, no busy thread measures 0', () => {
  const { b, speeds } = chunkyRun(false);
  for (const { t, speeds: sp } of speeds.filter((x) => x.t >= 0.06)) {
    for (const x of sp) assert.ok(x >= 1000 && x <= 4000, `at ${t} s a working thread's speed stays near 2,000 it/s: ${sp.join(', ')}`);
  }
  assert.ok(b.checkpoints >= 15, `checkpoints every 0.1 s: ${b.checkpoints}`);
});

test('a thread that runs out just after its last report keeps its measured speed (it did not slow down)', () => {
  const stamped = [0, 0];
  const { workers, progress } = fakeWorkers(2, stamped);
  let now = 0;
  const b = balancer(workers, () => now, { iterations: 1000, params: { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 } });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 10 });
  b.onTaskMessage(1, { type: 'it-range', lo: 10, hi: 100 });
  now = 0.5;
  [progress[0], stamped[0]] = [100, 0.5];
  [progress[1], stamped[1]] = [100, 0.5];
  b.tick();
  assert.deepEqual(b.speeds(), [200, 200]);
  b.checkpoint(); // 800 left, shared equally: each is assigned 100 + 400
  assert.deepEqual(b.task.workers.map((w) => w.assigned), [500, 500]);
  now = 0.52; // thread 0's range is done; its progress has not moved since the report
  b.onSlotDone(0, true);
  assert.equal(b.task.workers[0]!.working(), true, 'refused: it did less than assigned');
  assert.deepEqual(b.speeds(), [200, 200], 'no measure of 0 from a look that saw nothing new');
});

test('shed (process level): iterations for another node are taken from the ranges holding the most, each keeping a block, one message per range', () => {
  const { workers, progress, posted } = fakeWorkers(3);
  const b = balancer(workers, () => 0, { iterations: 1000, params: { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 } });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 30 }); // 300
  b.onTaskMessage(1, { type: 'it-range', lo: 30, hi: 80 }); // 500
  b.onTaskMessage(2, { type: 'it-range', lo: 80, hi: 82 }); // 20: less than a block to spare
  progress[1] = 100; // slot 1 is 100 into its range: it holds 400
  b.shed(300, 'b');
  assert.deepEqual(posted, [{ slot: 1, body: { type: 'it-shed', iterations: 300, to: 'b' } }], 'all from the range holding the most');
  posted.length = 0;
  b.shed(600, 'c');
  // Slot 1 can spare 400 − 10 (it keeps a block), slot 0 gives the other 210 of the 290 it can spare; slot 2 is not needed.
  assert.deepEqual(posted, [
    { slot: 1, body: { type: 'it-shed', iterations: 390, to: 'c' } },
    { slot: 0, body: { type: 'it-shed', iterations: 210, to: 'c' } },
  ]);
  posted.length = 0;
  b.shed(5, 'd');
  assert.deepEqual(posted, [], 'less than a block is not worth an order');
});

test('the local task wants to finish (§2.2): a checkpoint that predicts less than t_min left, a thread let go, every thread out of work', () => {
  const { workers, progress } = fakeWorkers(2);
  let now = 0;
  const ends: boolean[] = [];
  const b = balancer(workers, () => now, { iterations: 400, onLocalEnd: (idle) => void ends.push(idle) });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 20 });
  b.onTaskMessage(1, { type: 'it-range', lo: 20, hi: 40 });
  now = 0.5;
  progress[0] = 50;
  progress[1] = 50;
  b.tick(); // 100 it/s each
  now = 1;
  progress[0] = 100;
  progress[1] = 100;
  b.tick(); // checkpoint: 200 left at 200 it/s = 1 s > t_min: rebalanced, no request
  assert.deepEqual(ends, []);
  now = 1.6;
  progress[0] = 160;
  progress[1] = 160;
  b.checkpoint(); // 80 left at 200 it/s = 0.4 s < t_min: the process level is asked
  assert.deepEqual(ends, [false]);
  now = 2;
  progress[0] = 200;
  b.onSlotDone(0, true); // 200 done, assigned 200, 0.0 s left: granted, and the process level asked
  assert.equal(b.task.workers[0]!.working(), false);
  assert.deepEqual(ends, [false, false]);
  progress[1] = 200;
  b.onSlotDone(1, true); // the last thread: granted, and every thread is out of work
  assert.deepEqual(ends, [false, false, false, true]);
});

test('without orders (static, steal) the process level is never asked', () => {
  const { workers, progress } = fakeWorkers(1);
  let now = 0;
  const ends: boolean[] = [];
  const b = balancer(workers, () => now, { iterations: 100, orders: false, onLocalEnd: (idle) => void ends.push(idle) });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 10 });
  now = 1;
  progress[0] = 100;
  b.tick();
  b.onSlotDone(0, true);
  assert.deepEqual(ends, []);
});

test('a slot that takes a task from the pool runs what its assignment allows (at least a block); iterations from elsewhere are shared at once', () => {
  const { workers, progress, budgets } = fakeWorkers(2);
  let now = 0;
  const b = balancer(workers, () => now, { iterations: 2000, poolEmpty: () => false });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 50 });
  b.onTaskMessage(1, { type: 'it-range', lo: 50, hi: 100 });
  assert.deepEqual([...budgets], [], 'no assignment before speeds are measured: the fan-out\'s ranges are left whole');
  now = 0.5;
  progress[0] = 150;
  progress[1] = 50;
  b.tick(); // 300 and 100 it/s
  now = 1;
  progress[0] = 300;
  progress[1] = 100;
  b.tick(); // checkpoint: I_n = 400 done + 600 held; 600 shared 3 : 1 → keep 450 and 150
  assert.deepEqual([...budgets], [[1, 75]]);
  b.onTaskMessage(1, { type: 'it-shed', lo: 75, hi: 100 }); // pooled on this node
  b.onTaskMessage(1, { type: 'it-range', lo: 60, hi: 75 });
  budgets.clear();
  // Slot 1 (the slow one) ends its range at 1.5 s, 150 done since the checkpoint, and takes the pooled blocks 75-99 first.
  now = 1.5;
  progress[1] = 250;
  b.onTaskMessage(1, { type: 'it-range', lo: 75, hi: 100 });
  // Its assignment (250 of 100 + 150) is done: it runs one block, the rest goes back to the pool.
  assert.deepEqual([...budgets], [[1, 76]], 'a slow thread does not keep a pooled range whole');
  budgets.clear();
  // Blocks that come from another node (not pooled here) change what the node holds: a checkpoint at once.
  const before = b.checkpoints;
  now = 1.6;
  progress[0] = 480;
  b.onTaskMessage(0, { type: 'it-range', lo: 150, hi: 200 });
  assert.equal(b.checkpoints, before + 1, 'shared at once');
  assert.ok(b.task.total > 1000, `the node's total grew by the 500 that came: ${b.task.total}`);
});

test('blocks that arrive while a fast thread is idle: the slow thread that took them keeps its share by speed, the rest is pooled for the idle one', () => {
  const { workers, progress, budgets } = fakeWorkers(2);
  let now = 0;
  const b = balancer(workers, () => now, { iterations: 4000 });
  b.onTaskMessage(0, { type: 'it-range', lo: 0, hi: 20 });
  b.onTaskMessage(1, { type: 'it-range', lo: 20, hi: 100 });
  now = 0.5;
  progress[0] = 50;
  progress[1] = 200;
  b.tick(); // 100 and 400 it/s
  now = 1;
  progress[0] = 100;
  progress[1] = 400;
  b.tick(); // checkpoint: 500 left (by the reports) shared 1 : 4 → keep 100 and 400; nobody holds a block too many
  assert.deepEqual([...budgets], []);
  now = 2;
  progress[0] = 200;
  progress[1] = 800;
  b.onSlotDone(0, true);
  b.onSlotDone(1, true); // both ran out: everything done, both let go
  assert.deepEqual(b.task.workers.map((w) => w.working()), [false, false]);
  // Another node sends blocks 200-249 (500 iterations); the slow slot 0 is free first and takes them, slot 1 is idle.
  now = 2.1;
  b.onTaskMessage(0, { type: 'it-range', lo: 200, hi: 250 });
  // Slot 0 keeps 500 · 100 / (100 + 400) = 100 iterations (blocks 200-209); 210-249 go back to the pool.
  assert.deepEqual([...budgets], [[0, 210]]);
  budgets.clear();
  b.onTaskMessage(0, { type: 'it-shed', lo: 210, hi: 250 });
  b.onTaskMessage(1, { type: 'it-range', lo: 210, hi: 250 });
  assert.deepEqual([...budgets], [], 'the fast slot, let go before, takes the pooled rest whole (slot 0 is busy)');
  assert.deepEqual(b.task.workers.map((w) => w.working()), [true, true]);
});
