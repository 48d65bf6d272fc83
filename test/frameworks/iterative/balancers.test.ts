/**
 * RUPER-LB's state machines against hand-computed cases from the seed's pseudocode (Fig. 2–4), under
 * simulated time (timestamps are plain numbers of seconds).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuessWorker, RuperWorker } from '../../../src/frameworks/iterative/balance/ruper-worker.js';
import { apportion, RuperTask } from '../../../src/frameworks/iterative/balance/ruper-task.js';
import { ProcessMonitor, ProcessMonitorMember } from '../../../src/frameworks/iterative/balance/monitor.js';

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

test('addMeasure (Fig. 2 right): speed since the last report and its deviation from the previous speed', () => {
  const w = new RuperWorker();
  w.start(0, 1000);
  assert.equal(w.addMeasure(2, 100), Infinity); // no previous speed
  assert.deepEqual(w.measures, [{ at: 2, speed: 50 }]);
  close(w.addMeasure(4, 220), 1.2, 'dev'); // 120 / 2 s = 60 it/s, 60 / 50
  assert.deepEqual(w.measures[1], { at: 4, speed: 60 });
  assert.equal(w.done, 220);
  assert.equal(w.lastReport, 4);
  close(w.predDone(5), 280, 'predDone'); // 220 + 60 · 1
  assert.equal(w.predDone(100), 1000, 'never past the assignment');
});

test('report (Fig. 2 left): the interval shrinks by at most 0.8, grows by at most 1.2, and is capped at 0.8·Δt_pc', () => {
  const task = new RuperTask(10_000, { checkpointInterval: 10, minRemaining: 1, maxDeviation: 0.1 });
  task.start(0, 1);
  close(task.report(0, 100, 2), 1.6, 'first report: infinite deviation → ×0.8');
  close(task.report(0, 220, 4), 2 * 0.9, 'dev 0.2 > ds_max: ×(1 − (0.2 − 0.1))');
  close(task.report(0, 340.6, 6), 2 * 1.045, 'dev 0.005 < 0.1·ds_max: ×(1 + (0.05 − 0.005))');
  close(task.report(0, 461.2, 8), 2 * 1.05, 'same speed, dev 0: ×1.05');
  close(task.report(0, 761.2, 9), 1 * 0.8, 'speed ×4.98: ×max(1 − 3.875, 0.8)');
  close(task.report(0, 791.2, 10), 0.8, 'speed ×0.1, dev 0.9: ×max(0.2, 0.8)');
  close(task.report(0, 822.7, 11), 1, 'dev 0.05 between 0.1·ds_max and ds_max: unchanged');
  const capped = new RuperTask(10_000, { checkpointInterval: 2, minRemaining: 1, maxDeviation: 0.1 });
  capped.start(0, 1);
  capped.report(0, 100, 2);
  close(capped.report(0, 225, 4.5), 1.6, '2.5 s · 1.05 > Δt_pc = 2 → 0.8 · 2');
  capped.workers[0]!.finished = true;
  assert.equal(capped.report(0, 300, 5), -1, 'a worker that left the task gets -1');
});

test('checkPoint (Fig. 3 left): what is left goes to the working workers in proportion to speed', () => {
  const task = new RuperTask(1000, { checkpointInterval: 5, minRemaining: 0.25, maxDeviation: 0.1 });
  task.start(0, 2);
  assert.deepEqual(task.workers.map((w) => w.assigned), [500, 500]);
  task.report(0, 100, 1); // 100 it/s
  task.report(1, 50, 1); // 50 it/s
  // I_t = 150, s_t = 150, I_pred = 200 + 100 = 300, t_res = 700 / 150 > t_min: 850 left, 2/3 and 1/3.
  const cp = task.checkPoint(2);
  assert.equal(cp.kind, 'rebalanced');
  close((cp as { remainingTime: number }).remainingTime, 700 / 150, 't_res');
  assert.deepEqual(task.workers.map((w) => w.assigned), [100 + 567, 50 + 283]); // 566.67 → 567, 283.33 → 283
  assert.equal(task.lastCheckpoint, 2);
});

test('checkPoint keeps the assignment below t_min and forces the finish once everything is done', () => {
  const task = new RuperTask(1000, { checkpointInterval: 5, minRemaining: 2, maxDeviation: 0.1 });
  task.start(0, 2);
  task.report(0, 450, 1);
  task.report(1, 400, 1);
  // I_pred at 1.1 = 495 + 440 = 935: 65 left at 850 it/s, under t_min.
  assert.equal(task.checkPoint(1.1).kind, 'kept');
  assert.deepEqual(task.workers.map((w) => w.assigned), [500, 500]);
  task.report(0, 500, 2);
  task.report(1, 500, 2);
  assert.deepEqual(task.checkPoint(2), { kind: 'force-finish' });
  assert.deepEqual(task.workers.map((w) => w.assigned), [500, 500]);
  const over = new RuperTask(100);
  over.start(0, 2);
  over.report(0, 70, 1);
  over.report(1, 40, 1); // 110 registered of 100 (the assignment moved under it): assignments become what was done
  over.checkPoint(1);
  assert.deepEqual(over.workers.map((w) => w.assigned), [70, 40]);
});

test('finish requests (§2.1): refused for a report, refused for a checkpoint, then granted', () => {
  const task = new RuperTask(1000, { checkpointInterval: 5, minRemaining: 0.25, maxDeviation: 0.1 });
  task.start(0, 2);
  task.report(0, 100, 1);
  task.report(1, 50, 1);
  task.checkPoint(2); // 667 / 333
  assert.equal(task.requestFinish(1, 2), 'report', '50 registered < 333 assigned');
  task.report(1, 333, 3);
  // worker 0 predicted 100 + 100·2 = 300, worker 1 333: 367 left at 100 + 141.5 it/s = 1.52 s > t_min.
  assert.equal(task.requestFinish(1, 3), 'checkpoint');
  task.report(0, 667, 6);
  assert.equal(task.requestFinish(1, 6), 'granted');
  assert.equal(task.workers[1]!.working(), false);
  assert.equal(task.finished, false);
  assert.equal(task.requestFinish(0, 6), 'granted');
  assert.equal(task.finished, true);
});

test('apportion splits whole units exactly, largest remainders first', () => {
  assert.deepEqual(apportion(850, [2 / 3, 1 / 3]), [567, 283]);
  assert.deepEqual(apportion(10, [1, 1, 1]), [4, 3, 3]);
  assert.deepEqual(apportion(7, [0, 0]), [4, 3]);
  assert.deepEqual(apportion(0, [1, 2]), [0, 0]);
});

test('guess worker addMeasure (Fig. 3 right): corrects the speed by the deviation from its own prediction', () => {
  const g = new GuessWorker();
  g.start(0, 1000);
  assert.equal(g.addMeasure(2, 200), Infinity); // no speed yet: a plain measure, 100 it/s
  close(g.speed(), 100, 'first speed');
  close(g.addMeasure(4, 380), 0.9, 'expected 200 more, got 180');
  close(g.speed(), 90, '0.9 · 100');
  // The process now predicts fewer than before (380 → 300): mean speeds 300/6 vs 380/4.
  close(g.addMeasure(6, 300), 50 / 95, 'dev from mean speeds');
  close(g.speed(), (50 / 95) * 90, 'corrected speed');
  assert.equal(g.done, 300);
});

test('rank-0 monitor (Fig. 4 left): start shares, report schedule, rebalance, then the balance ends below t_min', () => {
  const m = new ProcessMonitor(1000, { checkpointInterval: 2, minRemaining: 0.5, maxDeviation: 0.1 });
  assert.deepEqual(m.start('a', 0), { assigned: 1000, finished: false });
  assert.deepEqual(m.start('b', 0), { assigned: 500, finished: false }, 'preliminary: I_rem / processes');
  assert.deepEqual(m.advance(1), { requestReports: [], timeout: 1 });
  assert.deepEqual(m.advance(1), { requestReports: ['a', 'b'], timeout: 2 }, 'asked again after Δt_pc without an answer');
  // a reports 300 at t=2 (150 it/s); b has no speed yet, so a gets all 700 left.
  assert.deepEqual(m.receiveReport('a', 2, 300), { assigned: 1000, finished: false });
  // b reports 100 (50 it/s): 600 left shared 3 : 1.
  assert.deepEqual(m.receiveReport('b', 2, 100), { assigned: 250, finished: false });
  assert.equal(m.worker('a')!.assigned, 750);
  const due = m.advance(1.6); // both asked at 1.6 s (first report: ×0.8)
  assert.deepEqual(due.requestReports, ['a', 'b']);
  // a: expected 150·1.6 = 240, got 400 → 250 it/s; b predicted 100 + 50·1.6 = 180. 120 left at 300 it/s = 0.4 s < t_min.
  assert.deepEqual(m.receiveReport('a', 3.6, 700), { assigned: 750, finished: true });
  assert.equal(m.allFinished(), false, 'b has not been told');
  assert.deepEqual(m.receiveReport('b', 3.6, 180), { assigned: 250, finished: true });
  assert.equal(m.allFinished(), true);
  assert.throws(() => m.receiveReport('c', 4, 1), /never started/);
});

test('rank-0 monitor: a balance that ended reopens when a process reports far less than it predicted', () => {
  const m = new ProcessMonitor(1000, { checkpointInterval: 2, minRemaining: 0.5, maxDeviation: 0.1 });
  m.start('a', 0);
  m.start('b', 0);
  m.receiveReport('a', 1, 400); // 400 it/s; b has no speed yet
  assert.deepEqual(m.receiveReport('b', 1, 100), { assigned: 200, finished: false }, '500 left shared 400 : 100');
  // a predicts 790 at t=2 (390 it/s); b is predicted at its 200: 10 left at 490 it/s, below t_min.
  assert.deepEqual(m.receiveReport('a', 2, 790), { assigned: 800, finished: true });
  // At t=3 a reports 600: its prediction had overshot. Mean speeds 600/3 against 790/2 → 390·200/395 ≈ 197.5 it/s.
  // Predicted now 600 + 200 = 800: 200 left at 297.5 it/s = 0.67 s > t_min, so the balance reopens:
  // I_t = 600 + 100, the 300 left shared 197.5 : 100 → 199.1 and 100.9 → 199 and 101 (largest remainder).
  assert.deepEqual(m.receiveReport('a', 3, 600), { assigned: 799, finished: false });
  assert.equal(m.worker('b')!.assigned, 201);
  assert.equal(m.allFinished(), false);
});

test('rank-0 monitor: a report request unanswered for Δt_pc (lost on the way) is sent again, an answered one is not', () => {
  const m = new ProcessMonitor(1000, { checkpointInterval: 1.25, minRemaining: 0.1, maxDeviation: 0.1 });
  m.start('a', 0);
  m.start('b', 0);
  assert.deepEqual(m.advance(1.25), { requestReports: ['a', 'b'], timeout: 1.25 });
  m.receiveReport('a', 1.25, 100); // a answers at once (first report: its next one in 1.25·0.8 = 1 s); b's request was lost
  assert.deepEqual(m.advance(0.5), { requestReports: [], timeout: 0.5 });
  assert.deepEqual(m.advance(0.5), { requestReports: ['a'], timeout: 0.25 }, 'a on its schedule; b has waited 1 of its 1.25 s');
  assert.deepEqual(m.advance(0.25), { requestReports: ['b'], timeout: 1 }, 'b asked again after Δt_pc; a has waited 0.25 s');
});

test('rank-0 monitor: a process that leaves stops counting and is not asked for reports', () => {
  const m = new ProcessMonitor(900, { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 });
  m.start('a', 0);
  m.start('b', 0);
  m.start('c', 0);
  m.remove('b');
  assert.deepEqual(m.processes(), ['a', 'c']);
  assert.deepEqual(m.advance(1).requestReports, ['a', 'c']);
  m.receiveReport('a', 1, 100); // 100 it/s
  m.receiveReport('c', 1, 300); // 300 it/s
  // A process that joins now is credited with the mean measured speed (200 it/s), so it gets a share.
  m.start('d', 1);
  assert.equal(m.worker('d')!.speed(), 200);
  m.receiveReport('a', 1.5, 150); // a keeps its 100 it/s
  const [a, c, d] = ['a', 'c', 'd'].map((n) => m.worker(n)!);
  // I_t = 150 + 300 + 0 = 450 left 450, speeds 100 : 300 : 200 → 75, 225, 150.
  assert.deepEqual([a!.assigned, c!.assigned, d!.assigned], [150 + 75, 300 + 225, 0 + 150]);
});

test('rank-0 monitor: a report from a process holding nothing keeps its last speed (it gets a share again)', () => {
  const m = new ProcessMonitor(1000, { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 });
  m.start('a', 0);
  m.start('b', 0);
  m.receiveReport('a', 1, 100); // 100 it/s
  m.receiveReport('b', 1, 100); // 100 it/s
  // b ran out of blocks: it still did 100; a plain measure would make its speed 0.
  m.receiveReport('b', 2, 100, true);
  assert.equal(m.worker('b')!.speed(), 100);
  assert.equal(m.worker('b')!.done, 100);
  m.receiveReport('a', 2, 250); // a: expected 100, got 150 → 150 it/s
  // 1000 − 350 left, shared 150 : 100 → 390 and 260.
  assert.deepEqual([m.worker('a')!.assigned, m.worker('b')!.assigned], [250 + 390, 100 + 260]);
});

test('rank-0 monitor: a report within 0.2·Δt_pc of the previous one registers the iterations but not a speed', () => {
  const m = new ProcessMonitor(10_000, { checkpointInterval: 1, minRemaining: 0.1, maxDeviation: 0.1 });
  m.start('a', 0);
  m.start('b', 0);
  m.receiveReport('a', 1, 1000);
  m.receiveReport('b', 1, 1000);
  m.receiveReport('b', 1.05, 1400); // 400 in 50 ms would read 8000 it/s and end the balance
  assert.equal(m.worker('b')!.speed(), 1000);
  assert.equal(m.worker('b')!.done, 1400);
  assert.equal(m.finished, false);
  m.receiveReport('b', 2, 2400); // expected 1000 · 0.95 = 950, got 1000: the measure resumes from 1.05 s
  assert.ok(Math.abs(m.worker('b')!.speed() - 1000 / 0.95) < 1e-9);
});

test('rank-n monitor (Fig. 4 right): start petition until answered, answer requests, one finish request at a time', () => {
  const p = new ProcessMonitorMember();
  assert.equal(p.requestFinish(1, 0), undefined, 'nothing to ask before rank 0 answered the start petition');
  assert.deepEqual(p.begin(), { instruction: 0 });
  assert.deepEqual(p.begin(), { instruction: 0 }, 'petitioned again (on the next announcement) while unanswered');
  p.onAssignment(0, { assigned: 500, finished: false });
  assert.equal(p.begin(), undefined, 'started: no more petitions');
  assert.deepEqual(p.onRequest(1, 3, 120), { instruction: 1, t: 3, predictedDone: 120 });
  p.onAssignment(1, { assigned: 600, finished: false });
  assert.equal(p.assigned, 600);
  assert.deepEqual(p.requestFinish(5, 600), { instruction: 2, t: 5, predictedDone: 600 });
  assert.equal(p.requestFinish(5.1, 600), undefined, 'one finish request on its way at a time');
  assert.equal(p.finishRequested, true, 'finish^MPI_req stays set while one is on its way');
  p.onAssignment(1, { assigned: 600, finished: false });
  assert.equal(p.finishSent, true, 'a report\'s answer is not the answer to the finish request');
  p.onAssignment(2, { assigned: 650, finished: false });
  assert.equal(p.finishSent, false);
  p.onAssignment(1, { assigned: 650, finished: true });
  assert.equal(p.requestFinish(6, 640), undefined, 'the balance is over: a thread or a checkpoint has nothing to ask');
  assert.deepEqual(p.requestFinish(6.5, 650, true), { instruction: 2, t: 6.5, predictedDone: 650 }, 'beyond the seed: every thread ran out, ask once more');
  assert.equal(p.requestFinish(6.6, 650, true), undefined);
  p.lost();
  assert.deepEqual(p.requestFinish(6.7, 650, true), { instruction: 2, t: 6.7, predictedDone: 650 }, 'a request that was never delivered can be sent again');
  p.restart();
  assert.deepEqual([p.started, p.finished, p.begin()], [false, false, { instruction: 0 }], 'a new rank 0: petition again');
});
