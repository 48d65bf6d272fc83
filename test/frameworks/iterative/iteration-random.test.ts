import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IterationRandom } from '../../../src/frameworks/iterative/iteration-random.js';

test('an iteration draws the same numbers whenever it runs, and other iterations other numbers', () => {
  const a = new IterationRandom(7);
  const b = new IterationRandom(7);
  const first = [a.at(123_456_789_012).uniform(), a.uniform(), a.normal()];
  b.at(5).uniform();
  assert.deepEqual([b.at(123_456_789_012).uniform(), b.uniform(), b.normal()], first);
  assert.notEqual(a.at(123_456_789_013).uniform(), first[0]);
  assert.notEqual(new IterationRandom(8).at(123_456_789_012).uniform(), first[0]);
  assert.notEqual(a.at(2 ** 32 + 5).uniform(), a.at(5).uniform(), 'the high bits of the index count');
});

test('uniform and normal streams have the right moments (within 4 standard errors)', () => {
  const r = new IterationRandom(1);
  const n = 200_000;
  let su = 0, su2 = 0, sn = 0, sn2 = 0;
  for (let i = 0; i < n; i++) {
    const u = r.at(i).uniform();
    assert.ok(u >= 0 && u < 1);
    su += u;
    su2 += u * u;
    const z = r.normal();
    sn += z;
    sn2 += z * z;
  }
  assert.ok(Math.abs(su / n - 0.5) < 4 * Math.sqrt(1 / 12 / n));
  assert.ok(Math.abs(su2 / n - 1 / 3) < 4 * Math.sqrt(4 / 45 / n));
  assert.ok(Math.abs(sn / n) < 4 / Math.sqrt(n));
  assert.ok(Math.abs(sn2 / n - 1) < 4 * Math.sqrt(2 / n));
});
