/**
 * The search loop and the job's shared bound: a task starts from the bound the job already has (a task
 * split off another has no best of its own), so it neither proposes worse values nor explores what the
 * bound prunes; its own best goes out only when it beats the job's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchLoop, type LoopContext } from '../../../src/frameworks/search/search-loop.js';
import { rootSearchState, type Incumbent } from '../../../src/frameworks/search/search-state.js';
import { tspProblem } from '../../../src/frameworks/search/tsp/tsp.js';
import { randomEuclideanInstance, tourLength, validateTour } from '../../../src/frameworks/search/tsp/tsp-tours.js';

/** A task context whose job's incumbent has value `bound` (undefined: none yet); records the values the task proposes, and each proposal. */
function context(bound: number | undefined): LoopContext & { proposed: number[]; incumbents: Incumbent[] } {
  const proposed: number[] = [];
  const incumbents: Incumbent[] = [];
  return {
    proposed,
    incumbents,
    shouldMigrate: () => false,
    potentialSplit: () => false,
    getVar: <T>(name: string) => (name === 'incumbent' && bound !== undefined ? { value: bound, solution: null } : undefined) as T | undefined,
    setVar: <T>(name: string, value: T) => {
      assert.equal(name, 'incumbent');
      incumbents.push(value as Incumbent);
      proposed.push((value as Incumbent).value);
    },
  };
}

describe('search loop and the shared bound', () => {
  const instance = randomEuclideanInstance(7, 3);
  const input = { instance, noPrune: false };
  const optimum = (() => {
    const s = rootSearchState(tspProblem, instance);
    searchLoop(tspProblem, s, input, context(undefined));
    return s.bestValue!;
  })();

  it('a split-off task under a bound no tour reaches proposes nothing and prunes at once', () => {
    const ctx = context(1); // shorter than any tour
    const state = { open: [[0, 0]], bestValue: null, best: null, count: 0, searchNodes: 0 };
    searchLoop(tspProblem, state, input, ctx);
    assert.deepEqual(ctx.proposed, []);
    assert.equal(state.searchNodes, 1, 'the root is pruned by the job\'s bound');
    assert.equal(state.bestValue, null);
  });

  it('under the optimum as the job\'s bound, a task proposes nothing; without a bound it proposes the optimum last', () => {
    const bounded = context(optimum);
    searchLoop(tspProblem, { open: [[0, 0]], bestValue: null, best: null, count: 0, searchNodes: 0 }, input, bounded);
    assert.deepEqual(bounded.proposed, []);
    const free = context(undefined);
    searchLoop(tspProblem, { open: [[0, 0]], bestValue: null, best: null, count: 0, searchNodes: 0 }, input, free);
    assert.equal(free.proposed.at(-1), optimum);
    for (let i = 1; i < free.proposed.length; i++) assert.ok(free.proposed[i]! < free.proposed[i - 1]!, 'each proposal improves on the last');
    // Each value goes out with its tour (the job's result may have to take it from there).
    for (const { value, solution } of free.incumbents) {
      assert.equal(validateTour(instance, solution as number[]), null);
      assert.equal(tourLength(instance, solution as number[]), value);
    }
  });

  it('a task\'s own best goes out only if it beats the job\'s bound', () => {
    const own = optimum + 5;
    const worse = context(optimum);
    searchLoop(tspProblem, { open: [], bestValue: own, best: [], count: 0, searchNodes: 0 }, input, worse);
    assert.deepEqual(worse.proposed, []);
    const better = context(own + 1);
    searchLoop(tspProblem, { open: [], bestValue: own, best: [], count: 0, searchNodes: 0 }, input, better);
    assert.deepEqual(better.proposed, [own]);
    const none = context(undefined);
    searchLoop(tspProblem, { open: [], bestValue: own, best: [], count: 0, searchNodes: 0 }, input, none);
    assert.deepEqual(none.proposed, [own]);
  });
});
