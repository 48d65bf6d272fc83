import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CoordError } from '../../../src/coord/errors.js';
import { GroupMembership } from '../../../src/coord/recipes/group-membership.js';
import { LeaderElection } from '../../../src/coord/recipes/leader-election.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import type { Backend } from '../backends.js';

const T = { timeout: 60_000 };

/** Group membership and leader election on one backend. `open` opens a session closed after the suite. */
export function membershipAndElectionTests(backend: () => Backend, open: (timeoutMs?: number) => Promise<CoordClient>): void {
  it('membership: members see each other join, update and leave, with metadata', T, async () => {
    const group = `/recipes/${randomUUID()}/members`;
    const sessions = await Promise.all([open(), open(), open()]);
    const groups = sessions.map((c) => new GroupMembership(c, group));
    await Promise.all(groups.map((g, i) => g.join(`node-${i}`, { address: `127.0.0.1:${7000 + i}`, workers: i + 1, job: 'j1' })));
    await Promise.all(groups.map((g) => g.watch()));
    for (const g of groups) {
      await waitFor(() => g.view().size === 3, 'all three members in every view');
      assert.deepEqual(g.view().get('node-2')?.meta, { address: '127.0.0.1:7002', workers: 3, job: 'j1' });
    }
    const left: string[] = [];
    groups[0]!.on('left', (m) => left.push(m.id));
    await groups[1]!.update({ address: '127.0.0.1:7001', workers: 8, job: 'j2' });
    await waitFor(() => groups[0]!.view().get('node-1')?.meta.job === 'j2', 'metadata update to propagate');
    await groups[2]!.leave();
    await waitFor(() => left.includes('node-2') && groups[0]!.view().size === 2, 'departure of node-2');
    // Each session learns of the departure from its own server, possibly a moment later.
    await waitFor(() => groups[1]!.view().size === 2, 'node-1 to see the departure');
    assert.deepEqual([...groups[1]!.view().keys()].sort(), ['node-0', 'node-1']);
    for (const g of groups) g.stop();
  });

  it('membership: a second live session cannot take a member id', T, async () => {
    const group = `/recipes/${randomUUID()}/members`;
    const [a, b] = await Promise.all([open(), open()]);
    await new GroupMembership(a, group).join('same');
    await assert.rejects(new GroupMembership(b, group).join('same'), (e: unknown) => e instanceof CoordError && e.code === 'NODE_EXISTS');
    // Joining again on the owning session is idempotent (e.g. a retry after a connection loss).
    await new GroupMembership(a, group).join('same');
  });

  it('membership: an expired member disappears from every other view', T, async () => {
    const group = `/recipes/${randomUUID()}/members`;
    const [a, b, c] = await Promise.all([open(), open(), open()]);
    const views = [new GroupMembership(a, group), new GroupMembership(b, group), new GroupMembership(c, group)];
    await Promise.all(views.map((g, i) => g.join(`m${i}`)));
    await Promise.all(views.map((g) => g.watch()));
    await Promise.all(views.map((g) => waitFor(() => g.view().size === 3, 'full view')));
    await backend().expire(c);
    await waitFor(() => !views[0]!.view().has('m2') && !views[1]!.view().has('m2'), 'expired member to leave both views', 30_000);
    views.forEach((g) => g.stop());
  });

  it('election: one leader; on resignation or expiry only the next candidate takes over', T, async () => {
    const path = `/recipes/${randomUUID()}/election`;
    const sessions = await Promise.all([open(), open(), open()]);
    const elections = sessions.map((c, i) => new LeaderElection(c, path, { id: `cand-${i}`, data: { port: 9000 + i } }));
    const elected: number[] = [];
    elections.forEach((e, i) => e.on('elected', () => elected.push(i)));
    for (const e of elections) await e.start(); // sequential: creation order is election order
    await withDeadline(elections[0]!.whenElected(), 'first leader');
    assert.deepEqual(elected, [0]);
    assert.deepEqual(await elections[2]!.leader(), { id: 'cand-0', data: { port: 9000 } });
    const thirdReads = elections[2]!.stats.reads;
    await elections[0]!.resign();
    await withDeadline(elections[1]!.whenElected(), 'second leader');
    // No herd: the third candidate watches only the second and is not woken by the first leaving.
    await elections[1]!.leader();
    assert.equal(elections[2]!.stats.reads, thirdReads, 'third candidate did no work when the first leader left');
    assert.deepEqual(elected, [0, 1]);
    await backend().expire(sessions[1]!);
    await withDeadline(elections[2]!.whenElected(), 'third leader after expiry', 30_000);
    assert.deepEqual(elected, [0, 1, 2]);
    // The expired leader learns of it from its own session (which may come after the new leader's election).
    await waitFor(() => !elections[1]!.isLeader, 'expired leader to step down', 30_000);
    assert.deepEqual((await elections[2]!.leader())?.id, 'cand-2');
  });
}
