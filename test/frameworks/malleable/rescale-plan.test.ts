import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequest, targetNodes, wantedNodes } from '../../../src/frameworks/malleable/rescale-plan.js';
import { checkRuntimeOptions } from '../../../src/frameworks/malleable/runtime-options.js';

const live = (...ids: string[]) => new Set(ids);

describe('rescale requests', () => {
  it('bad bodies are refused naming the field', () => {
    assert.throws(() => parseRequest('rescale', { nodes: 0 }), /rescale: "nodes" must be a whole number ≥ 1 or a non-empty list/);
    assert.throws(() => parseRequest('rescale', { nodes: [] }), /"nodes"/);
    assert.throws(() => parseRequest('vacate', {}), /vacate: "node" must be a node id/);
    assert.throws(() => parseRequest('grow', {}), /not "grow"/);
    assert.deepEqual(parseRequest('rescale', { nodes: ['b', 'a', 'b'] }), { type: 'rescale', keep: ['b', 'a'] });
  });

  it('a count shrink keeps the leader and lets the last nodes go', () => {
    assert.deepEqual(targetNodes({ type: 'rescale', count: 2 }, ['a', 'b', 'c', 'd'], live('a', 'b', 'c', 'd'), 'c'), ['a', 'c']);
    assert.deepEqual(targetNodes({ type: 'rescale', count: 1 }, ['a', 'b'], live('a', 'b'), 'b'), ['b']);
  });

  it('a count expand takes idle live members, as many as asked and available', () => {
    assert.deepEqual(targetNodes({ type: 'rescale', count: 4 }, ['a', 'b'], live('a', 'b', 'x', 'y', 'z'), 'a'), ['a', 'b', 'x', 'y']);
    assert.deepEqual(targetNodes({ type: 'rescale', count: 4 }, ['a', 'b'], live('a', 'b', 'x'), 'a'), ['a', 'b', 'x']);
    assert.deepEqual(wantedNodes({ type: 'rescale', count: 4 }, ['a', 'b']), { names: [], count: 4 });
  });

  it('named nodes: keep those listed that are live (a crashed one is left out)', () => {
    assert.deepEqual(targetNodes({ type: 'rescale', keep: ['a', 'dead', 'x'] }, ['a', 'b'], live('a', 'b', 'x'), 'a'), ['a', 'x']);
    assert.deepEqual(wantedNodes({ type: 'rescale', keep: ['a', 'x'] }, ['a', 'b']), { names: ['x'], count: 2 });
  });

  it('vacate removes the node, is a no-op for a node the job does not hold, and never empties the job', () => {
    assert.deepEqual(targetNodes({ type: 'vacate', node: 'b' }, ['a', 'b', 'c'], live('a', 'b', 'c'), 'a'), ['a', 'c']);
    assert.deepEqual(targetNodes({ type: 'vacate', node: 'gone' }, ['a', 'c'], live('a', 'c'), 'a'), ['a', 'c']);
    assert.throws(() => targetNodes({ type: 'vacate', node: 'a' }, ['a'], live('a'), 'a'), /no node/);
  });

  it('runtime options are checked field by field', () => {
    assert.equal(checkRuntimeOptions({ checkpointEvery: 10, strategy: 'greedy', rescaleAt: [{ iteration: 5, nodes: 2 }] }), undefined);
    assert.match(checkRuntimeOptions({ checkpointEvery: -1 })!, /runtime.checkpointEvery/);
    assert.match(checkRuntimeOptions({ strategy: 'best' as never })!, /runtime.strategy/);
    assert.match(checkRuntimeOptions({ rescaleAt: [{ iteration: 0, nodes: 2 }] })!, /runtime.rescaleAt\[0\]/);
  });
});
