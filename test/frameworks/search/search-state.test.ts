/**
 * A search job's result with its variables: the incumbent (value with solution) published by any run is taken
 * when the counted runs found nothing as good; a decision's published solution when they found none. Merging
 * incumbents is by value, ties keeping the current one, so every member converges on the same one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeIncumbents, withSearchVars } from '../../../src/frameworks/search/search-state.js';
import type { SearchResult } from '../../../src/frameworks/search/search-problem.js';

const result = (kind: SearchResult['kind'], value: number | null, solution: unknown, count = 0): SearchResult => ({ kind, value, solution, count, searchNodes: 12 });

describe('search result and the job\'s variables', () => {
  it('optimise: the published incumbent replaces a worse or missing result, never an equal or better one', () => {
    const min = withSearchVars('min');
    const incumbent = { value: 5, solution: [0, 2, 1] };
    assert.deepEqual(min(result('optimise', 9, [0, 1, 2]), { incumbent }), result('optimise', 5, [0, 2, 1]));
    assert.deepEqual(min(result('optimise', null, null), { incumbent }), result('optimise', 5, [0, 2, 1]));
    assert.deepEqual(min(result('optimise', 5, [0, 1, 2]), { incumbent }), result('optimise', 5, [0, 1, 2]), 'a tie keeps the counted solution');
    assert.deepEqual(min(result('optimise', 4, [1]), { incumbent }), result('optimise', 4, [1]));
    assert.deepEqual(min(result('optimise', 9, [0, 1, 2]), {}), result('optimise', 9, [0, 1, 2]), 'no variable: unchanged');
    const max = withSearchVars('max');
    assert.deepEqual(max(result('optimise', 3, ['a']), { incumbent: { value: 4, solution: ['b'] } }), result('optimise', 4, ['b']));
    assert.deepEqual(max(result('optimise', 6, ['a']), { incumbent: { value: 4, solution: ['b'] } }), result('optimise', 6, ['a']));
  });

  it('decide: a published solution counts when no counted run found one; enumerations are left alone', () => {
    const decide = withSearchVars(undefined);
    assert.deepEqual(decide(result('decide', null, null), { found: { solution: [1, 3, 0, 2] } }), result('decide', null, [1, 3, 0, 2], 1));
    assert.deepEqual(decide(result('decide', null, [2, 0, 3, 1], 1), { found: { solution: [1, 3, 0, 2] } }), result('decide', null, [2, 0, 3, 1], 1));
    assert.deepEqual(decide(result('decide', null, null), {}), result('decide', null, null));
    assert.deepEqual(decide(result('enumerate', null, null, 92), {}), result('enumerate', null, null, 92));
  });

  it('incumbents merge by value; a tie keeps the current one (monotone and idempotent)', () => {
    const merge = mergeIncumbents('min');
    const a = { value: 5, solution: 'a' };
    const b = { value: 5, solution: 'b' };
    const c = { value: 3, solution: 'c' };
    assert.equal(merge(a, b), a);
    assert.equal(merge(a, c), c);
    assert.equal(merge(c, a), c);
    assert.equal(merge(merge(a, c), c), merge(a, c));
    assert.equal(mergeIncumbents('max')(a, c), a);
  });
});
