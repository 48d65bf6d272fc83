import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockMapping, greedyLB, refineLB, slotLoads } from '../../../src/frameworks/malleable/load-balance.js';
import { balancePlacement, blockPlacement, objectsByThread, threadsOn } from '../../../src/frameworks/malleable/placement.js';

describe('load balancing strategies', () => {
  it('blockMapping keeps neighbours together and spreads evenly', () => {
    assert.deepEqual(blockMapping(8, 3), [0, 0, 0, 1, 1, 1, 2, 2]);
    assert.deepEqual(blockMapping(4, 4), [0, 1, 2, 3]);
  });

  it('greedy: heaviest object first onto the least loaded slot (hand-computed)', () => {
    // loads 7,5,4,3,1 on two slots: 7→0, 5→1, 4→1 (5<7), 3→0 (7<9)? no: slot0=7, slot1=9 → 3→0, 1→0 (10 vs 9 → 1)
    const loads = [3, 7, 1, 5, 4];
    const owners = greedyLB(loads, [true, true]);
    // order: 7(obj1)→s0, 5(obj3)→s1, 4(obj4)→s1 (5<7), 3(obj0)→s0 (7<9), 1(obj2)→s1 (9<10)
    assert.deepEqual(owners, [0, 0, 1, 1, 1]);
    assert.deepEqual(slotLoads(loads, owners, 2), [10, 10]);
  });

  it('greedy never uses an unavailable slot and breaks ties by index', () => {
    assert.deepEqual(greedyLB([1, 1, 1, 1], [true, false, true]), [0, 2, 0, 2]);
  });

  it('refine evacuates unavailable slots heaviest first and moves nothing else when balanced', () => {
    // slots 0,1 stay (load 4 each), slot 2 leaves with objects of load 3 and 1.
    const loads = [2, 2, 2, 2, 3, 1];
    const owners = [0, 0, 1, 1, 2, 2];
    const next = refineLB(loads, owners, [true, true, false]);
    assert.deepEqual(next, [0, 0, 1, 1, 0, 1]); // 3 → slot 0 (tie, lowest), 1 → slot 1
    assert.deepEqual(next.slice(0, 4), owners.slice(0, 4), 'objects on staying slots stay');
  });

  it('refine fills a new empty slot from the most loaded ones (expand)', () => {
    const loads = [1, 1, 1, 1, 1, 1, 1, 1];
    const owners = [0, 0, 0, 0, 1, 1, 1, 1];
    const next = refineLB(loads, owners, [true, true, true, true]);
    assert.deepEqual(slotLoads(loads, next, 4), [2, 2, 2, 2]);
    assert.equal(next.filter((s, i) => s !== owners[i]).length, 4, 'exactly the four objects needed moved');
  });

  it('the same loads always give the same mapping', () => {
    const loads = Array.from({ length: 64 }, (_, i) => ((i * 37) % 11) + 0.5);
    const a = refineLB(loads, blockMapping(64, 4), [true, false, true, true]);
    const b = refineLB(loads, blockMapping(64, 4), [true, false, true, true]);
    assert.deepEqual(a, b);
    assert.ok(!a.includes(1));
    const per = slotLoads(loads, a, 4);
    const avg = loads.reduce((x, y) => x + y, 0) / 3;
    for (const s of [0, 2, 3]) assert.ok(per[s]! <= avg * 1.05 + 11, `slot ${s} load ${per[s]} near the average ${avg}`);
  });

  it('refuses to balance onto no slot at all', () => {
    assert.throws(() => greedyLB([1], [false]), /at least one available slot/);
  });
});

describe('placement of objects on the threads of nodes (places)', () => {
  it('blockPlacement: contiguous blocks over every thread of every node, node by node', () => {
    const map = blockPlacement(10, ['a', 'b'], [2, 3]);
    // five places: a/0 a/1 b/0 b/1 b/2, two objects each
    assert.deepEqual(map.owner, [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(map.thread, [0, 0, 1, 1, 0, 0, 1, 1, 2, 2]);
    assert.deepEqual(map.threads, [2, 3]);
    assert.deepEqual(objectsByThread(map, 'b'), [[4, 5], [6, 7], [8, 9]]);
    assert.deepEqual(objectsByThread(map, 'c'), []);
    assert.equal(threadsOn(map, 'b'), 3);
    assert.equal(threadsOn(map, 'c'), 0);
    assert.throws(() => blockPlacement(4, ['a'], [0]), /at least one object thread/);
  });

  it('refine over places moves an object between the threads of one node when that is where the room is', () => {
    // a/0 {0,1,2} = 4.5, a/1 {3,4,5} = 1.5, b/0 {6,7,8} = 3; bound 3 × 1.05: object 0 fits on the lightest place, a/1.
    const map = blockPlacement(9, ['a', 'b'], [2, 1]);
    const next = balancePlacement('refine', [1.5, 1.5, 1.5, 0.5, 0.5, 0.5, 1, 1, 1], map, ['a', 'b'], () => 1);
    assert.deepEqual(next.owner, [0, 0, 0, 0, 0, 0, 1, 1, 1]);
    assert.deepEqual(next.thread, [1, 0, 0, 1, 1, 1, 0, 0, 0], 'object 0 moved from a/0 to a/1; the others stayed');
  });

  it('a shrink evacuates the leaving node onto the threads of the others; an expand fills the joiner\'s threads', () => {
    const map = blockPlacement(8, ['a', 'b'], [2, 2]);
    const shrunk = balancePlacement('refine', new Array(8).fill(1), map, ['a'], () => 99);
    assert.deepEqual(shrunk.nodes, ['a']);
    assert.deepEqual(shrunk.threads, [2], 'a keeps its own thread count');
    assert.deepEqual(shrunk.owner, new Array(8).fill(0));
    assert.deepEqual(shrunk.thread, [0, 0, 1, 1, 0, 1, 0, 1], 'b\'s objects alternate over a\'s threads, lightest first');
    const grown = balancePlacement('refine', new Array(8).fill(1), shrunk, ['a', 'c'], (n) => (n === 'c' ? 2 : 1));
    assert.deepEqual(grown.threads, [2, 2], 'the joiner brings its own thread count');
    const perPlace = new Map<string, number>();
    grown.owner.forEach((o, i) => perPlace.set(`${o}/${grown.thread[i]}`, (perPlace.get(`${o}/${grown.thread[i]}`) ?? 0) + 1));
    assert.deepEqual([...perPlace.values()].sort(), [2, 2, 2, 2], 'two objects on each of the four places');
  });
});
