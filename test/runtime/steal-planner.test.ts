import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StealPlanner } from '../../src/runtime/pool/steal-planner.js';
import { Rng } from '../../src/util/rng.js';

describe('steal planner (thief side, simulated time)', () => {
  it('asks nobody while work is not needed or nobody else is in the job', () => {
    const p = new StealPlanner(new Rng(1));
    assert.deepEqual(p.next(0, false, ['a', 'b']), { kind: 'none' });
    assert.deepEqual(p.next(0, true, []), { kind: 'none' });
  });

  it('keeps one request outstanding, backs off exponentially on empty answers, resets on success', () => {
    const p = new StealPlanner(new Rng(2), { minBackoffMs: 4, maxBackoffMs: 64, requestTimeoutMs: 1000 });
    let now = 0;
    const first = p.next(now, true, ['a', 'b', 'c']);
    assert.equal(first.kind, 'send');
    assert.equal(p.next(now, true, ['a', 'b', 'c']).kind, 'wait', 'no second request while one is outstanding');
    const waits: number[] = [];
    let req = first.kind === 'send' ? first.requestId : -1;
    for (let i = 0; i < 8; i++) {
      p.answered(req, false, now);
      const action = p.next(now, true, ['a', 'b', 'c']);
      assert.equal(action.kind, 'wait');
      const ms = action.kind === 'wait' ? action.ms : 0;
      waits.push(ms);
      now += ms;
      const again = p.next(now, true, ['a', 'b', 'c']);
      assert.equal(again.kind, 'send');
      req = again.kind === 'send' ? again.requestId : -1;
    }
    // Backoff grows (with jitter in [0.5, 1.5)) and is capped.
    assert.ok(waits[0]! >= 2 && waits[0]! < 6, `first backoff ${waits[0]}`);
    assert.ok(waits[4]! >= 32 && waits[4]! < 96, `fifth backoff ${waits[4]}`);
    assert.ok(waits.every((w) => w < 96), 'capped');
    p.answered(req, true, now);
    assert.equal(p.next(now, true, ['a', 'b', 'c']).kind, 'send', 'success resets the backoff');
    assert.deepEqual(p.stats, { requests: 10, successes: 1, empty: 8, timeouts: 0 });
  });

  it('gives up on a silent victim after the timeout, and on a victim that left the job', () => {
    const p = new StealPlanner(new Rng(3), { requestTimeoutMs: 100, minBackoffMs: 1, maxBackoffMs: 1 });
    const a = p.next(0, true, ['x']);
    assert.deepEqual(p.next(50, true, ['x']), { kind: 'wait', ms: 50 });
    assert.equal(p.next(100, true, ['x']).kind, 'wait', 'timed out, now backing off');
    assert.equal(p.stats.timeouts, 1);
    assert.equal(p.next(200, true, ['x']).kind, 'send');
    p.memberLeft('x', 200);
    assert.equal(p.waitingFor, undefined);
    void a;
  });

  it('ignores stale answers and prefers another victim after an empty answer', () => {
    const p = new StealPlanner(new Rng(4), { minBackoffMs: 1, maxBackoffMs: 1 });
    const first = p.next(0, true, ['a', 'b']);
    assert.equal(first.kind, 'send');
    if (first.kind !== 'send') return;
    p.answered(first.requestId + 99, true, 0);
    assert.equal(p.waitingFor, first.requestId, 'a stale answer changes nothing');
    p.answered(first.requestId, false, 0);
    const second = p.next(10, true, ['a', 'b']);
    assert.equal(second.kind, 'send');
    if (second.kind === 'send') assert.notEqual(second.victim, first.victim);
  });

  it('asks again at once when new members join', () => {
    const p = new StealPlanner(new Rng(5), { minBackoffMs: 1000, maxBackoffMs: 1000 });
    const first = p.next(0, true, ['a']);
    if (first.kind === 'send') p.answered(first.requestId, false, 0);
    assert.equal(p.next(1, true, ['a']).kind, 'wait');
    p.membersJoined(1);
    assert.equal(p.next(1, true, ['a', 'b']).kind, 'send');
  });
});
