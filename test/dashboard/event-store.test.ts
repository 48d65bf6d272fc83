import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanEvent, EventStore } from '../../src/dashboard/event-store.js';

const span = (id: string, at: number, end: number) => ({ id, at, end });

describe('EventStore', () => {
  it('reports an event once, again only when it changed, and fills in the job and lane of a kind\'s events', () => {
    const store = new EventStore();
    const first = store.merge('workflow', { tasks: [span('t1', 10, 20), span('t2', 15, 30)] }, { job: 'j', lane: 'n1' });
    assert.deepEqual(first, [{ origin: 'workflow', list: 'tasks', events: [{ id: 't1', at: 10, end: 20, lane: 'n1', job: 'j' }, { id: 't2', at: 15, end: 30, lane: 'n1', job: 'j' }] }]);
    assert.deepEqual(store.merge('workflow', { tasks: [span('t1', 10, 20), span('t2', 15, 30)] }, { job: 'j', lane: 'n1' }), [], 'republished as is: nothing new');
    const moved = store.merge('workflow', { tasks: [span('t2', 15, 31)] }, { job: 'j', lane: 'n1' });
    assert.deepEqual(moved[0]!.events.map((e) => [e.id, e.end]), [['t2', 31]]);
    assert.deepEqual(store.all()[0]!.events.map((e) => [e.id, e.end]), [['t1', 20], ['t2', 31]], 'replaced in place');
  });

  it('bounds every list and the number of lists', () => {
    const store = new EventStore({ perList: 3, lists: 2 });
    store.merge('a', { l: [1, 2, 3, 4, 5].map((i) => ({ id: `e${i}`, at: i })) });
    assert.deepEqual(store.all()[0]!.events.map((e) => e.id), ['e3', 'e4', 'e5']);
    // The publisher still lists e1 and e2: older than all the full list holds, they do not come back.
    assert.deepEqual(store.merge('a', { l: [1, 2, 3, 4, 5, 6].map((i) => ({ id: `e${i}`, at: i })) }).flatMap((c) => c.events.map((e) => e.id)), ['e6']);
    store.merge('b', { l: [{ id: 'x', at: 1 }] });
    store.merge('c', { l: [{ id: 'y', at: 1 }] });
    assert.deepEqual(store.all().map((l) => l.origin), ['b', 'c'], 'the list changed longest ago went');
  });

  it('drops what is malformed and cuts what is too long', () => {
    const store = new EventStore();
    const changed = store.merge('svc', { batches: [null, 7, { at: 1 }, { id: 'no-time' }, { id: 'b', at: Infinity }, { id: 'ok', at: 5, end: 2, values: { a: 1, 'bad key': 2, b: 'x', c: NaN } }] });
    assert.deepEqual(changed[0]!.events, [{ id: 'ok', at: 5, values: { a: 1 } }], 'an end before the start is dropped, and bad values');
    assert.deepEqual(store.merge('bad origin!', { l: [{ id: 'x', at: 1 }] }), []);
    assert.deepEqual(store.merge('svc', { 'bad list!': [{ id: 'x', at: 1 }], notAList: { id: 'x', at: 1 } }), []);
    assert.equal(cleanEvent({ id: 'x'.repeat(500), at: 1, label: 'y'.repeat(500) })!.id.length, 128);
    assert.equal(cleanEvent({ id: 'x', at: 1, label: 'y'.repeat(500) })!.label!.length, 128);
    assert.equal(cleanEvent({ id: 'x', at: 1, open: true })!.open, undefined, 'only a span can be open');
    assert.equal(Object.keys(cleanEvent({ id: 'x', at: 1, values: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`v${i}`, i])) })!.values!).length, 16);
  });
});
