import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { GlobalVariables } from '../../../src/coord/recipes/global-variables.js';
import { TaskTracker, TerminationList, isTerminated, togglesOf } from '../../../src/coord/recipes/termination-detection.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { Rng } from '../../../src/util/rng.js';
import { waitFor, withDeadline } from '../../support/wait.js';

const T = { timeout: 60_000 };

export function variablesAndTerminationTests(open: (timeoutMs?: number) => Promise<CoordClient>): void {
  it('global variables: concurrent min updates converge on the best value everywhere', T, async () => {
    const base = `/recipes/${randomUUID()}/vars`;
    const sessions = await Promise.all([open(), open(), open()]);
    const vars = sessions.map((c) => new GlobalVariables(c, base));
    await Promise.all(vars.map((v) => v.define<number>('bound', { rule: 'min' })));
    const rng = new Rng(7);
    const proposals = vars.map(() => Array.from({ length: 30 }, () => rng.int(1, 1_000_000)));
    const best = Math.min(...proposals.flat());
    // All members write at once; every write is conditional, so none can overwrite a better value.
    await Promise.all(vars.map((v, i) => Promise.all(proposals[i]!.map((p) => v.setVar('bound', p)))));
    for (const v of vars) await waitFor(() => v.getVar<number>('bound') === best, `every member to see ${best}`);
    assert.equal(await vars[0]!.setVar('bound', best + 1), best, 'a worse proposal leaves the global value alone');
    // A member whose every proposal was beaten before its write went out writes nothing (it only reads).
    assert.ok(vars.some((v) => v.stats.writes > 0) && vars.every((v) => v.stats.reads > 0), 'stats count reads and writes');
    assert.ok(vars.reduce((n, v) => n + v.stats.writes, 0) < proposals.flat().length, 'proposals made together were not each written');
    vars.forEach((v) => v.stop());
  });

  it('global variables: a proposal the known value covers is not written; proposals made together go out in one write', T, async () => {
    const base = `/recipes/${randomUUID()}/vars`;
    const [client, other] = await Promise.all([open(), open()]);
    const v = new GlobalVariables(client, base);
    const w = new GlobalVariables(other, base);
    await Promise.all([v.define<number>('bound', { rule: 'min' }), w.define<number>('bound', { rule: 'min' })]);
    assert.equal(await v.setVar('bound', 1000), 1000);
    const writes = client.stats.writes;
    const reads = client.stats.reads;
    assert.equal(await v.setVar('bound', 2000), 1000, 'a worse proposal resolves with the global value');
    assert.equal(client.stats.writes, writes, 'and writes nothing');
    assert.equal(client.stats.reads, reads + 1, 'one read, for the global value it answers with');
    // A search improving its bound 100 times in one turn: one conditional write of the best.
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => v.setVar('bound', 999 - i)));
    assert.deepEqual(new Set(results), new Set([900]), 'every call resolves with the global value after its merge');
    assert.equal(client.stats.writes - writes, 1, 'one write for the hundred proposals');
    await waitFor(() => w.getVar<number>('bound') === 900, 'the other member to see 900');
    // The other member's write moved the version on: this member's next write conflicts once, re-reads, and merges.
    assert.equal(await w.setVar('bound', 500), 500);
    assert.equal(await v.setVar('bound', 950), 500, 'a proposal covered by a stale local value still answers with the global value');
    assert.equal(await v.setVar('bound', 700), 500, 'a stale member learns the better global value');
    assert.equal(await v.setVar('bound', 400), 400);
    await waitFor(() => w.getVar<number>('bound') === 400, 'the other member to see 400');
    v.stop();
    w.stop();
  });

  it('global variables: a custom monotone rule (set union) loses no element under contention', T, async () => {
    const base = `/recipes/${randomUUID()}/vars`;
    const sessions = await Promise.all([open(), open()]);
    const vars = sessions.map((c) => new GlobalVariables(c, base));
    const union = (a: number[], b: number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);
    await Promise.all(vars.map((v) => v.define<number[]>('seen', { rule: union })));
    await Promise.all(vars.map((v, i) => Promise.all(Array.from({ length: 20 }, (_, k) => v.setVar('seen', [i * 100 + k])))));
    const expected = [...Array.from({ length: 20 }, (_, k) => k), ...Array.from({ length: 20 }, (_, k) => 100 + k)];
    for (const v of vars) await waitFor(() => JSON.stringify(v.getVar('seen')) === JSON.stringify(expected), 'union of all elements');
    assert.equal(vars[0]!.getVar('never-set'), undefined);
    await assert.rejects(vars[0]!.setVar('undefined-var', 1), /not defined/);
    vars.forEach((v) => v.stop());
  });

  it('global variables: settled answers from the ensemble once this member\'s own proposals are published', T, async () => {
    const base = `/recipes/${randomUUID()}/vars`;
    const [client, other] = await Promise.all([open(), open()]);
    const v = new GlobalVariables(client, base);
    await v.define<{ value: number }>('best', { rule: (a, b) => (b.value < a.value ? b : a) });
    assert.equal(await v.settled('best'), undefined, 'never set: undefined');
    // Not awaited: settled must wait for this proposal's write, not answer with what the ensemble had before it.
    void v.setVar('best', { value: 7 });
    assert.deepEqual(await v.settled('best'), { value: 7 });
    assert.deepEqual(JSON.parse((await other.getData(`${base}/best`)).data.toString('utf8')), { value: 7 }, 'the proposal is in the ensemble');
    // A better value written by another session, maybe not yet seen here through the watch, is what settled answers.
    await other.setData(`${base}/best`, Buffer.from(JSON.stringify({ value: 3 })));
    assert.deepEqual(await v.settled('best'), { value: 3 });
    await assert.rejects(v.settled('undefined-var'), /not defined/);
    // An oversized proposal is refused before it is merged or written.
    await assert.rejects(v.setVar('best', { value: 1, pad: 'x'.repeat(600_000) }), /global variable "best" is \d+ bytes as JSON; the limit is 524288/);
    assert.deepEqual(v.getVar('best'), { value: 3 });
    assert.deepEqual(await v.settled('best'), { value: 3 });
    v.stop();
  });

  it('termination: fires once, only after the last task of a tree completes', T, async () => {
    const base = `/recipes/${randomUUID()}/termination`;
    const [coordSession, w1, w2] = await Promise.all([open(), open(), open()]);
    const list = new TerminationList(coordSession, base);
    assert.equal(await list.init('root'), true);
    assert.equal(await list.init('root'), false, 'a second init (e.g. after failover) attaches, it does not restart');
    let fired = 0;
    list.on('terminated', () => fired++);
    list.start();
    const trackers = [new TaskTracker(w1, base, { maxBatch: 1 }), new TaskTracker(w2, base, { maxBatch: 8 })];
    // root splits a, b; a splits a1; children complete before their parents.
    await trackers[0]!.completed('a1');
    await trackers[1]!.completed('b');
    await trackers[0]!.completed('a', ['a1']);
    assert.equal(await isTerminated(coordSession, base), false);
    // Other sessions may read from another server a moment behind (ZooKeeper reads are not linearizable).
    await waitFor(async () => JSON.stringify((await coordSession.getChildren(`${base}/tasks`)).sort()) === JSON.stringify(['a', 'b', 'root']), 'the list to hold a, b and root');
    assert.equal(fired, 0);
    await trackers[1]!.completed('root', ['a', 'b']);
    await withDeadline(list.finished(), 'termination');
    assert.equal(fired, 1);
    await waitFor(() => isTerminated(w1, base), 'the terminated marker to be visible to another session');
    // A list that takes over later sees the computation finished but does not fire again.
    const late = new TerminationList(w2, base);
    let lateFired = 0;
    late.on('terminated', () => lateFired++);
    await withDeadline(late.finished(), 'late list sees termination');
    assert.equal(lateFired, 0);
    assert.equal(fired, 1);
  });

  it('termination: toggles cancel within a batch', () => {
    assert.deepEqual(togglesOf([{ id: 'c', children: [] }, { id: 'p', children: ['c', 'd'] }]), ['p', 'd']);
    assert.deepEqual(togglesOf([{ id: 'x', children: [] }, { id: 'x', children: [] }]), []);
  });
}
