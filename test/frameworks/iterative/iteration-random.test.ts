import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IterationRandom } from '../../../src/frameworks/iterative/iteration-random.js';
import { iterateSequentially, iterativeInput } from '../../../src/frameworks/iterative/run-iterative.js';
import checksum from './apps/checksum.js';

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

test('seeds are 64-bit: seeds that differ only above bit 32 give other streams; larger seeds are refused', () => {
  const draws = (seed: number | bigint | string) => {
    const r = new IterationRandom(seed).at(3);
    return [r.nextUint32(), r.nextUint32(), r.nextUint32()];
  };
  assert.notDeepEqual(draws(4294967297), draws(1), '2^32 + 1 is not 1');
  assert.notDeepEqual(draws(2n ** 63n + 1n), draws(1));
  assert.notDeepEqual(draws(2n ** 63n + 1n), draws(2n ** 62n + 1n));
  assert.deepEqual(draws('18446744073709551615'), draws(2n ** 64n - 1n), 'a decimal string is the same seed as the bigint');
  assert.deepEqual(draws(4294967297n), draws(4294967297));
  // The high word keys the second round through a bijection: a few thousand high words, no two alike.
  const keys = new Set<string>();
  for (let hi = 0n; hi < 4096n; hi++) keys.add(draws((hi << 32n) | 5n).join());
  assert.equal(keys.size, 4096);
  assert.throws(() => new IterationRandom(2n ** 64n), /from 0 to 2\^64 − 1/);
  assert.throws(() => new IterationRandom(-1), /from 0 to 2\^64 − 1.*got -1/);
  assert.throws(() => new IterationRandom(2 ** 60), /bigint or a decimal string above 2\^53 − 1/);
  assert.throws(() => new IterationRandom('0x10'), /whole number ≥ 0, got "0x10"/);
});

test('seeds below 2^32 keep the streams they had when seeds were 32-bit', () => {
  // First draws of iteration 3 under seed 1, as the 32-bit generator gave them (uniform 0.0489670878690911).
  assert.equal(new IterationRandom(1).at(3).uniform(), 0.0489670878690911);
});

test('a job\'s seed: 64 bits through the options (number, bigint or decimal string), a bad one named', () => {
  const run = (seed: number | bigint | string) => iterateSequentially(checksum, { iterations: 2000, params: { work: 2 }, seed }).value;
  assert.notDeepEqual(run(4294967297), run(1));
  assert.deepEqual(run('4294967297'), run(4294967297n));
  assert.equal(iterativeInput({ iterations: 1, seed: 2n ** 64n - 1n }).seed, '18446744073709551615', 'carried in the job input as a decimal string');
  assert.throws(() => iterativeInput({ iterations: 1, seed: 2n ** 64n }), /iterative: seed must be a whole number from 0 to 2\^64 − 1/);
  assert.throws(() => iterativeInput({ iterations: 1, seed: 1.5 }), /iterative: seed must be a whole number ≥ 0, got 1.5/);
});
