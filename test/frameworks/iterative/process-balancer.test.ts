/**
 * The process level on the job's leader (ProcessBalancer over the pure ProcessMonitor) under
 * simulated time, with hand-computed cases: start petitions, report requests on Fig. 4's schedule,
 * where a node's surplus goes (plan: the transfers in its answer), finish requests, and the loop
 * asking for nothing once every node was told that the balance finished.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProcessBalancer, type Instruction, type Transfer } from '../../../src/frameworks/iterative/process-balancer.js';
import type { Assignment } from '../../../src/frameworks/iterative/balance/monitor.js';

interface Answer { node: string; instruction: Instruction; a: Assignment; transfers: Transfer[] }

function balancer(opts: { iterations: number; minRemaining: number; members: string[] }) {
  let now = 0;
  const answers: Answer[] = [];
  const requests: string[] = [];
  const invited: string[] = [];
  const timers: number[] = [];
  const members = [...opts.members];
  const b = new ProcessBalancer({
    nodeId: members[0]!, iterations: opts.iterations, blockSize: 10,
    params: { checkpointInterval: 1, minRemaining: opts.minRemaining, maxDeviation: 0.1 },
    now: () => now, members: () => members,
    invite: (node) => void invited.push(node),
    requestReport: (node) => void requests.push(node),
    answer: (node, instruction, a, transfers) => void answers.push({ node, instruction, a, transfers }),
    setTimer: (_fn, ms) => {
      timers.push(ms);
      return () => undefined;
    },
  });
  const last = (node: string) => [...answers].reverse().find((x) => x.node === node)!;
  const at = (t: number) => void (now = t);
  /** The loop started, every member's start petition answered at t = 0; then t = 1 (one Δt_pc). */
  const started = () => {
    b.start();
    for (const node of members) b.onStart(node);
    at(1);
  };
  return { b, answers, requests, invited, timers, members, last, at, started };
}

test('start petitions (instruction 0): members not started are invited; each petition is answered with a preliminary share', () => {
  const x = balancer({ iterations: 1000, minRemaining: 0.1, members: ['a', 'b'] });
  x.b.start();
  assert.deepEqual(x.invited, ['a', 'b'], 'the loop invites the members the monitor has not seen');
  assert.deepEqual(x.requests, [], 'no report is asked of a node that has not started');
  x.b.onStart('a');
  x.b.onStart('b');
  assert.deepEqual(x.answers.map((r) => [r.node, r.instruction, r.a.assigned, r.transfers]), [['a', 0, 1000, []], ['b', 0, 500, []]], 'I_rem / processes');
  x.at(1);
  x.b.tick();
  assert.deepEqual(x.invited, ['a', 'b'], 'started members are not invited again');
  assert.deepEqual(x.requests, ['a', 'b'], 'each asked for a report after Δt_pc');
});

test('plan: the reporting node\'s surplus over its assignment goes, in whole blocks, to the node short of its own, counted once on its way', () => {
  const x = balancer({ iterations: 1000, minRemaining: 0.1, members: ['a', 'b'] });
  x.started();
  // a: 300 done (300 it/s), 200 held. b has no speed yet: a is assigned everything left (300 + 700); a holds less, so gives nothing.
  x.b.onReport('a', { predictedDone: 300, held: 200 }, false);
  assert.deepEqual([x.last('a').a, x.last('a').transfers], [{ assigned: 1000, finished: false }, []]);
  // b: 100 done (100 it/s), 400 held. 600 left shared 300 : 100 → a 300 + 450, b 100 + 150.
  // b keeps 150 and has 400: 250 surplus; a needs 750 − 300 predicted − 200 held = 250.
  x.b.onReport('b', { predictedDone: 100, held: 400 }, false);
  assert.deepEqual(x.last('b'), { node: 'b', instruction: 1, a: { assigned: 250, finished: false }, transfers: [{ to: 'a', iterations: 250 }] });
  assert.equal(x.b.transfers, 1);
  // b again before a reports: the 250 on their way count as a's; nothing more goes.
  x.at(1.5);
  x.b.onReport('b', { predictedDone: 150, held: 350 }, false);
  assert.deepEqual(x.last('b').transfers, [], 'a is not short any more: its 250 are on the way');
  // a reports with the 250 arrived (held 200 − 150 done + 250): its need is met, and a fast node gives nothing back.
  x.b.onReport('a', { predictedDone: 450, held: 300 }, false);
  assert.deepEqual(x.last('a').transfers, []);
});

test('plan: a surplus below a block stays; several short nodes, the furthest below first, in whole blocks', () => {
  const x = balancer({ iterations: 3000, minRemaining: 0.1, members: ['a', 'b', 'c'] });
  x.started();
  // b and c at 100 it/s holding a little; a at 100 it/s holding everything it was given and more.
  x.b.onReport('b', { predictedDone: 100, held: 105 }, false);
  x.b.onReport('c', { predictedDone: 100, held: 305 }, false);
  // 2700 left over b and c: 1350 each. Neither holds more than it keeps.
  assert.deepEqual([x.last('b').transfers, x.last('c').transfers], [[], []]);
  x.b.onReport('a', { predictedDone: 100, held: 2390 }, false);
  // 2700 left shared equally: each keeps 900. a's surplus 2390 − 900 = 1490; b needs 900 − 105 = 795, c 900 − 305 = 595.
  assert.deepEqual(x.last('a').transfers, [{ to: 'b', iterations: 790 }, { to: 'c', iterations: 590 }], 'b first (needs more), whole blocks of 10');
  assert.equal(x.last('a').a.assigned, 1000);
});

test('a finish request is answered as a report (instruction 2) and asks every other node for a fresh report; one that finds a node behind reopens the balance and moves its surplus', () => {
  const x = balancer({ iterations: 1000, minRemaining: 0.5, members: ['a', 'b'] });
  x.started();
  x.b.onReport('a', { predictedDone: 100, held: 400 }, false);
  x.b.onReport('b', { predictedDone: 100, held: 400 }, false); // 100 it/s each: 800 left, 4 s: shared 400 each
  x.requests.length = 0;
  x.at(5);
  // a ran out (500 done, nothing held). b is predicted at 100 + 100·4 = 500: nothing left, the balance ends.
  x.b.onReport('a', { predictedDone: 500, held: 0 }, true);
  assert.deepEqual(x.last('a'), { node: 'a', instruction: 2, a: { assigned: 500, finished: true }, transfers: [] });
  assert.deepEqual(x.requests, ['b'], 'the others are asked for a report at once');
  // b slowed: 300 done, 200 held (expected 400 more since t = 1, got 200: 50 it/s). 200 left at 150 it/s = 1.33 s > t_min:
  // reopened; 200 shared 100 : 50 → a 500 + 133, b 300 + 67; b's surplus 200 − 67 = 133 → 130 to a.
  x.b.onReport('b', { predictedDone: 300, held: 200 }, false);
  assert.deepEqual(x.last('b'), { node: 'b', instruction: 1, a: { assigned: 367, finished: false }, transfers: [{ to: 'a', iterations: 130 }] });
});

test('once every node was told that the balance finished, the loop asks for no report (Fig. 4 exits) until a finish request', () => {
  const x = balancer({ iterations: 1000, minRemaining: 0.5, members: ['a', 'b'] });
  x.started();
  x.b.tick();
  x.b.onReport('a', { predictedDone: 100, held: 400 }, false);
  x.b.onReport('b', { predictedDone: 100, held: 400 }, false);
  x.at(4.6);
  // 460 each (100 it/s): 80 left at 200 it/s = 0.4 s < t_min. Both are told.
  x.b.onReport('a', { predictedDone: 460, held: 40 }, false);
  x.b.onReport('b', { predictedDone: 460, held: 40 }, false);
  assert.deepEqual([x.last('a').a.finished, x.last('b').a.finished], [true, true]);
  assert.equal(x.b.monitor.allFinished(), true);
  x.requests.length = 0;
  x.timers.length = 0;
  x.at(6);
  x.b.tick();
  assert.deepEqual(x.requests, [], 'reports were due, none is asked');
  assert.deepEqual(x.timers, [1000], 'the loop only follows membership, every Δt_pc');
  x.members.push('c');
  x.at(7);
  x.b.tick();
  assert.deepEqual(x.invited.slice(-1), ['c'], 'a node that joins is still invited');
  x.b.onReport('a', { predictedDone: 500, held: 0 }, true);
  assert.deepEqual(x.requests, ['b'], 'a finish request still asks the others');
});

test('a node that leaves stops counting: not asked, not given anything, its assignment shared by the rest', () => {
  const x = balancer({ iterations: 1000, minRemaining: 0.1, members: ['a', 'b'] });
  x.started();
  x.b.onReport('a', { predictedDone: 100, held: 400 }, false);
  x.b.onReport('b', { predictedDone: 100, held: 400 }, false);
  x.members.splice(1, 1);
  x.at(2);
  x.requests.length = 0;
  x.b.tick();
  assert.deepEqual(x.b.monitor.processes(), ['a']);
  assert.deepEqual(x.requests, ['a']);
  x.b.onReport('a', { predictedDone: 200, held: 800 }, false); // b's ranges came back to a
  // 1000 − 200 − b's 100 done = 700 left, all a's: a keeps 200 + 700 and holds 800, so nothing moves.
  assert.deepEqual(x.last('a'), { node: 'a', instruction: 1, a: { assigned: 900, finished: false }, transfers: [] });
});
