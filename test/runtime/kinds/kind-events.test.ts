import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventRing } from '../../../src/runtime/kinds/kind-events.js';

describe('EventRing', () => {
  it('keeps the newest events, replacing one with the same id in place', () => {
    const ring = new EventRing(3);
    for (const id of ['a', 'b', 'c']) ring.put({ id, at: 1 });
    ring.put({ id: 'b', at: 2 });
    assert.deepEqual(ring.list().map((e) => [e.id, e.at]), [['a', 1], ['b', 2], ['c', 1]]);
    ring.put({ id: 'd', at: 3 });
    assert.deepEqual(ring.list().map((e) => e.id), ['b', 'c', 'd']);
    assert.equal(ring.size, 3);
  });

  it('refuses a limit below 1', () => {
    assert.throws(() => new EventRing(0), /limit ≥ 1, got 0/);
  });
});
