import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FigureHistory } from '../../src/dashboard/figure-history.js';

const node = (id: string, job: string | null, figures: Record<string, number>, kind = 'iterative') => ({ id, job, kind: job ? kind : null, figures });

describe('FigureHistory', () => {
  it('samples each job\'s nodes once per tick, idle nodes and nodes without figures apart', () => {
    const h = new FigureHistory();
    h.add(1000, [node('a', 'j', { speed: 5, 'speed.0': 5 }), node('b', 'j', { speed: 7 }), node('c', null, {}), node('d', 'k', {})]);
    h.add(2000, [node('a', 'j', { speed: 6 }), node('b', 'k', { done: 1 }, 'workflow')]);
    assert.deepEqual(h.all(), [
      { job: 'j', kind: 'iterative', samples: [{ t: 1000, nodes: { a: { speed: 5, 'speed.0': 5 }, b: { speed: 7 } } }, { t: 2000, nodes: { a: { speed: 6 } } }] },
      { job: 'k', kind: 'workflow', samples: [{ t: 2000, nodes: { b: { done: 1 } } }] },
    ]);
  });

  it('keeps the newest samples of each job and the jobs sampled last', () => {
    const h = new FigureHistory({ points: 3, jobs: 2 });
    for (let t = 0; t < 6; t++) h.add(t, [node('a', 'j1', { x: t })]);
    h.add(10, [node('a', 'j2', { x: 1 })]);
    h.add(11, [node('a', 'j3', { x: 1 })]);
    assert.deepEqual(h.all().map((j) => j.job), ['j2', 'j3']);
    const again = new FigureHistory({ points: 3 });
    for (let t = 0; t < 6; t++) again.add(t, [node('a', 'j1', { x: t })]);
    assert.deepEqual(again.all()[0]!.samples.map((s) => s.t), [3, 4, 5]);
  });

  it('bounds the figure values held in all, taking from the largest history first', () => {
    const h = new FigureHistory({ values: 10 });
    for (let t = 0; t < 4; t++) h.add(t, [node('a', 'big', { x: t, y: t }), node('b', 'big', { x: t, y: t })]); // 4 values a sample
    h.add(4, [node('c', 'small', { x: 1 })]);
    assert.ok(h.values <= 10, `${h.values} values held`);
    const [big, small] = h.all();
    assert.deepEqual(big!.samples.map((s) => s.t), [2, 3], 'the largest history lost its oldest samples');
    assert.equal(small!.samples.length, 1);
  });
});
