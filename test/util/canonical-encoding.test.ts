/** The canonical encoding signatures are computed over: equal values give equal bytes whatever the order of keys; different values differ. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalBytes } from '../../src/util/canonical-encoding.js';

const same = (a: unknown, b: unknown) => assert.deepEqual(canonicalBytes(a), canonicalBytes(b));
const differ = (a: unknown, b: unknown) => assert.notDeepEqual(canonicalBytes(a), canonicalBytes(b), `${String(a)} vs ${String(b)}`);

describe('canonicalBytes', () => {
  it('ignores the order of object keys and Map/Set entries, and keys whose value is undefined', () => {
    same({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 });
    same(new Map<unknown, unknown>([['x', 1], [2, 'y']]), new Map<unknown, unknown>([[2, 'y'], ['x', 1]]));
    same(new Set([3, 'a', null]), new Set([null, 3, 'a']));
    same({ a: 1, gone: undefined }, { a: 1 });
  });

  it('tells apart what a program tells apart', () => {
    differ([1, 2], [2, 1]);
    differ({ a: 1 }, { a: '1' });
    differ({ a: null }, {});
    differ([undefined], [null]);
    differ(0, -0);
    differ(1n, 1);
    differ('ab', ['a', 'b']);
    differ({ ab: 'c' }, { a: 'bc' });
    differ(Buffer.from([1, 2]), new Int8Array([1, 2]));
    differ(new Uint16Array([1]), new Int16Array([1]));
    differ(new Map([['a', 1]]), { a: 1 });
    differ(new Date(5), 5);
    same(Buffer.from([1, 2]), new Uint8Array([1, 2]));
    same(NaN, Number('x'));
  });

  it('refuses what it cannot encode, naming where it is', () => {
    assert.throws(() => canonicalBytes({ a: [1, { f: () => 1 }] }), /cannot encode a function canonically \(at \$\.a\[1\]\.f\)/);
    assert.throws(() => canonicalBytes({ r: /x/ }), /cannot encode a RegExp canonically \(at \$\.r\)/);
    assert.throws(() => canonicalBytes({ s: Symbol('x') }), /cannot encode a symbol canonically/);
  });
});
