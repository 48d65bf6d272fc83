/**
 * The coordination contract: every backend must pass these tests unchanged.
 * Each test works under its own fresh root path.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { aclBytes, clusterAcl, CLUSTER_USER, digestId, MONITOR_USER, OPEN_ACL, Perm } from '../../src/coord/access.js';
import { CoordError } from '../../src/coord/errors.js';
import { Transaction } from '../../src/coord/transaction.js';
import { catchUp, mkdirp, waitForState } from '../../src/coord/tree-ops.js';
import { MAX_REQUEST_BYTES, requestBytes } from '../../src/coord/request-size.js';
import type { CoordClient, Op, WatchEvent } from '../../src/coord/types.js';
import { watchChildren, watchData } from '../../src/coord/watch.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { deferred, waitFor, withDeadline } from '../support/wait.js';
import { useBackend, type Backend } from './backends.js';

const T = { timeout: 60_000 };

async function rejectsWith(p: Promise<unknown>, code: string, opIndex?: number, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CoordError, `expected CoordError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (opIndex !== undefined) assert.equal(err.opIndex, opIndex);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** A NO_AUTH refusal at `path` (op `opIndex` of a transaction) whose message says what is required. */
function refused(p: Promise<unknown>, path: string, message: RegExp, opIndex?: number): Promise<void> {
  return rejectsWith(p, 'NO_AUTH', opIndex, new RegExp(`NO_AUTH at ${path}[ :(].*${message.source}`));
}

export function contractSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`coordination contract: ${name}`, () => {
    const setup = useBackend(makeBackend);
    const open = setup.open;
    const freshRoot = async (c: CoordClient) => {
      const root = `/contract/${randomUUID()}`;
      await mkdirp(c, root);
      return root;
    };

    it('creates, reads, updates and deletes znodes with versions', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      const bytes = Buffer.from([0, 1, 2, 255, 254]);
      assert.equal(await c.create(`${root}/a`, bytes), `${root}/a`);
      const got = await c.getData(`${root}/a`);
      assert.deepEqual([...got.data], [...bytes]);
      assert.equal(got.stat.version, 0);
      assert.equal(got.stat.ephemeralOwner, null);
      const stat = await c.setData(`${root}/a`, Buffer.from('v1'), 0);
      assert.equal(stat.version, 1);
      assert.equal((await c.getData(`${root}/a`)).data.toString(), 'v1');
      assert.equal((await c.exists(`${root}/a`))?.version, 1);
      assert.equal(await c.exists(`${root}/missing`), null);
      await c.create(`${root}/a/child`);
      assert.deepEqual(await c.getChildren(`${root}/a`), ['child']);
      assert.equal((await c.exists(`${root}/a`))?.numChildren, 1);
      await c.delete(`${root}/a/child`);
      await c.delete(`${root}/a`, 1);
      assert.equal(await c.exists(`${root}/a`), null);
    });

    it('catchUp: a session then reads every write another session completed before; it changes nothing', T, async () => {
      const writer = await open();
      const reader = await open();
      const root = await freshRoot(writer);
      // Writes acknowledged to one session, read at once by another (on ZooKeeper, maybe another server).
      for (let i = 0; i < 60; i++) {
        await writer.create(`${root}/w${i}`);
        await catchUp(reader, root);
        assert.notEqual(await reader.exists(`${root}/w${i}`), null, `write ${i} seen after catching up`);
      }
      const before = (await reader.exists(root))!;
      await catchUp(reader, root);
      const after = (await reader.exists(root))!;
      assert.deepEqual([after.version, after.cversion, after.numChildren], [before.version, before.cversion, before.numChildren], 'nothing changed');
      await rejectsWith(catchUp(reader, `${root}/missing`), 'NO_NODE');
    });

    it('mkdirp creates missing ancestors and writes only what is missing', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      const writes = () => c.stats.writes;
      let before = writes();
      await mkdirp(c, `${root}/a/b/c`);
      assert.equal(writes() - before, 5, 'refused creates of c and b (their parents missing), then a, b and c');
      assert.deepEqual(await c.getChildren(`${root}/a/b`), ['c']);
      before = writes();
      await mkdirp(c, `${root}/a/b/c`);
      assert.equal(writes() - before, 0, 'an existing path: a read, no write');
      before = writes();
      await mkdirp(c, `${root}/a/b/d`);
      assert.equal(writes() - before, 1, 'only the last segment missing: one create');
      // Two at once on the same new path: both succeed, the path exists once.
      await Promise.all([mkdirp(c, `${root}/x/y`), mkdirp(c, `${root}/x/y`)]);
      assert.deepEqual(await c.getChildren(`${root}/x`), ['y']);
    });

    it('reports typed errors naming the path', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      await c.create(`${root}/x`);
      await rejectsWith(c.create(`${root}/x`), 'NODE_EXISTS');
      await rejectsWith(c.create(`${root}/nope/y`), 'NO_NODE');
      await rejectsWith(c.getData(`${root}/nope`), 'NO_NODE');
      await rejectsWith(c.getChildren(`${root}/nope`), 'NO_NODE');
      await rejectsWith(c.delete(`${root}/nope`), 'NO_NODE');
      await rejectsWith(c.setData(`${root}/x`, Buffer.from('a'), 7), 'BAD_VERSION');
      await rejectsWith(c.delete(`${root}/x`, 3), 'BAD_VERSION');
      await c.create(`${root}/x/y`);
      await rejectsWith(c.delete(`${root}/x`), 'NOT_EMPTY');
      await c.create(`${root}/e`, undefined, 'ephemeral');
      await rejectsWith(c.create(`${root}/e/child`), 'NO_CHILDREN_FOR_EPHEMERALS');
      await rejectsWith(c.create('relative/path'), 'BAD_ARGUMENTS');
      await rejectsWith(c.getData(`${root}/trailing/`), 'BAD_ARGUMENTS');
      const err = await c.getData(`${root}/nope`).catch((e: unknown) => e);
      assert.ok(err instanceof CoordError && err.path === `${root}/nope`, 'error names the path');
    });

    it('numbers sequential znodes in creation order with ten digits', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push(await c.create(`${root}/s-`, undefined, i % 2 ? 'ephemeral_sequential' : 'persistent_sequential'));
      for (const p of made) assert.match(p, new RegExp(`^${root}/s-\\d{10}$`));
      const numbers = made.map((p) => Number(p.slice(-10)));
      assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b));
      assert.equal(new Set(numbers).size, 5);
    });

    it('binds ephemeral znodes to their session', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/eph`, Buffer.from('a'), 'ephemeral');
      // Another session may read from a server a moment behind: wait until it sees the write.
      await waitFor(async () => (await b.exists(`${root}/eph`)) !== null, 'the ephemeral to be visible to b');
      assert.equal((await b.exists(`${root}/eph`))?.ephemeralOwner, a.sessionId);
      const gone = deferred<WatchEvent>();
      assert.ok(await b.exists(`${root}/eph`, (e) => gone.resolve(e)));
      await a.close();
      assert.equal((await withDeadline(gone.promise, 'ephemeral deletion event')).type, 'deleted');
      assert.equal(await b.exists(`${root}/eph`), null);
      await rejectsWith(a.getData('/'), 'CLOSED');
    });

    it('fires one-shot data, existence and child watches', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      const events: WatchEvent[] = [];
      const created = deferred();
      assert.equal(await a.exists(`${root}/w`, (e) => { events.push(e); created.resolve(); }), null);
      await b.create(`${root}/w`, Buffer.from('0'));
      await withDeadline(created.promise, 'created event');
      const changed = deferred();
      await a.getData(`${root}/w`, (e) => { events.push(e); changed.resolve(); });
      const childEvent = deferred();
      await a.getChildren(root, (e) => { events.push(e); childEvent.resolve(); });
      await b.setData(`${root}/w`, Buffer.from('1'));
      await b.setData(`${root}/w`, Buffer.from('2')); // one-shot: no second event
      await withDeadline(changed.promise, 'data event');
      await b.create(`${root}/w2`);
      await withDeadline(childEvent.promise, 'child event');
      const deleted = deferred();
      await a.getData(`${root}/w`, (e) => { events.push(e); deleted.resolve(); });
      await b.delete(`${root}/w`);
      await withDeadline(deleted.promise, 'delete event');
      // A round trip after the last change: any extra event would have been delivered by now.
      await a.exists('/');
      assert.deepEqual(events.map((e) => `${e.type} ${e.path.slice(root.length)}`), [
        'created /w', 'dataChanged /w', 'childrenChanged ', 'deleted /w',
      ].map((s) => s.replace('childrenChanged ', 'childrenChanged ')));
    });

    it('delivers a watch event before the reply of a later read that shows the change', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/o`, Buffer.from('old'));
      const order: string[] = [];
      await a.getData(`${root}/o`, () => order.push('event'));
      await b.setData(`${root}/o`, Buffer.from('new'));
      // Wait until a can see the new value, then check the event came first.
      await waitFor(async () => {
        const { data } = await a.getData(`${root}/o`);
        if (data.toString() !== 'new') return false;
        order.push('read-new');
        return true;
      }, 'new value visible');
      assert.deepEqual(order, ['event', 'read-new']);
    });

    it('keeps re-armed watches without missing the final state', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/counter`, Buffer.from('0'));
      let lastData = '';
      let lastChildren: string[] | null = null;
      const dw = watchData(a, `${root}/counter`, (d) => { lastData = d ? d.data.toString() : 'gone'; });
      const cw = watchChildren(a, `${root}/kids`, (kids) => { lastChildren = kids; });
      await Promise.all([dw.ready, cw.ready]);
      assert.equal(lastChildren, null, 'missing znode reported as null');
      for (let i = 1; i <= 50; i++) await b.setData(`${root}/counter`, Buffer.from(String(i)));
      await b.create(`${root}/kids`);
      for (let i = 0; i < 20; i++) await b.create(`${root}/kids/k${i}`);
      for (let i = 0; i < 20; i += 2) await b.delete(`${root}/kids/k${i}`);
      await waitFor(() => lastData === '50', `data watch to reach 50 (at ${lastData})`);
      await waitFor(() => lastChildren?.length === 10, 'children watch to see 10 kids');
      assert.deepEqual([...(lastChildren ?? [])].sort(), Array.from({ length: 10 }, (_, i) => `k${2 * i + 1}`).sort());
      dw.close();
      cw.close();
    });

    it('applies transactions atomically and names the failing op', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      await c.create(`${root}/v`, Buffer.from('a'));
      await rejectsWith(c.multi([
        { op: 'create', path: `${root}/new1` },
        { op: 'setData', path: `${root}/v`, data: Buffer.from('b') },
        { op: 'create', path: `${root}/v` },
      ]), 'NODE_EXISTS', 2);
      assert.equal(await c.exists(`${root}/new1`), null, 'nothing of a failed transaction is applied');
      assert.equal((await c.getData(`${root}/v`)).data.toString(), 'a');
      // Version 0 must be honoured as a real condition (node-zookeeper-client turns it into -1).
      await c.setData(`${root}/v`, Buffer.from('a1'));
      await rejectsWith(c.multi([{ op: 'check', path: `${root}/v`, version: 0 }, { op: 'create', path: `${root}/new2` }]), 'BAD_VERSION', 0);
      await rejectsWith(c.multi([{ op: 'setData', path: `${root}/v`, data: Buffer.from('x'), version: 0 }]), 'BAD_VERSION', 0);
      await c.create(`${root}/d`);
      await c.setData(`${root}/d`, Buffer.from('1'));
      await rejectsWith(c.multi([{ op: 'delete', path: `${root}/d`, version: 0 }]), 'BAD_VERSION', 0);
      const results = await new Transaction(c)
        .check(`${root}/v`, 1)
        .create(`${root}/seq-`, Buffer.from('s'), 'persistent_sequential')
        .setData(`${root}/v`, Buffer.from('c'), 1)
        .delete(`${root}/d`, 1)
        .commit();
      assert.equal(results.length, 4);
      assert.equal(results[0]!.op, 'check');
      assert.match((results[1] as { path: string }).path, new RegExp(`^${root}/seq-\\d{10}$`));
      assert.equal((results[2] as { stat: { version: number } }).stat.version, 2);
      assert.equal(await c.exists(`${root}/d`), null);
      assert.deepEqual(await c.multi([]), []);
    });

    it('limits a whole request to jute.maxbuffer: refused one byte over it, accepted at it, session intact', T, async () => {
      const c = await open();
      const root = await freshRoot(c);
      const states: string[] = [];
      c.onState((s) => states.push(s));
      const paths = [`${root}/big-a`, `${root}/big-b`, `${root}/big-c`];
      // Three creates of ~350 KB each: every op far under 1 MiB, the request `extra` bytes past the limit.
      const ops = (extra: number): Array<Op & { op: 'create' }> => {
        const room = MAX_REQUEST_BYTES - requestBytes(paths.map((path) => ({ op: 'create', path })), true) + extra;
        const third = Math.floor(room / 3);
        return paths.map((path, i) => ({ op: 'create', path, data: Buffer.alloc(i === 2 ? room - 2 * third : third, i) }));
      };
      const over = ops(1);
      assert.equal(requestBytes(over, true), MAX_REQUEST_BYTES + 1);
      const err = await c.multi(over).catch((e: unknown) => e);
      assert.ok(err instanceof CoordError, `expected CoordError, got ${String(err)}`);
      assert.equal(err.code, 'BAD_ARGUMENTS');
      assert.match(err.message, new RegExp(`${MAX_REQUEST_BYTES + 1} bytes.*limit of ${MAX_REQUEST_BYTES} bytes`));
      await rejectsWith(c.create(`${root}/single`, Buffer.alloc(MAX_REQUEST_BYTES)), 'BAD_ARGUMENTS');
      assert.equal(await c.exists(paths[0]!), null, 'nothing of a refused request is applied');
      // Exactly at the limit ZooKeeper accepts it: the size is counted as the server counts it.
      const atLimit = ops(0);
      assert.equal(requestBytes(atLimit, true), MAX_REQUEST_BYTES);
      await c.multi(atLimit);
      assert.equal((await c.exists(paths[2]!))?.dataLength, atLimit[2]!.data?.length);
      assert.equal(c.state, 'connected');
      assert.deepEqual(states, [], 'the session never lost its connection');
    });

    it('survives a connection loss with its session, ephemerals and watches', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/mine`, undefined, 'ephemeral');
      const states: string[] = [];
      a.onState((s) => states.push(s));
      const event = deferred<WatchEvent>();
      await a.exists(`${root}/later`, (e) => event.resolve(e));
      await setup.backend().interrupt(a);
      await waitFor(() => states.includes('disconnected') && a.state === 'connected', 'disconnect and reconnect');
      assert.ok(await b.exists(`${root}/mine`), 'ephemeral survives a connection loss');
      await b.create(`${root}/later`);
      assert.equal((await withDeadline(event.promise, 'watch after reconnect')).type, 'created');
      assert.equal((await a.getChildren(root)).length, 2);
    });

    it('expires a session: state event, ephemerals gone for others, operations fail', T, async () => {
      const a = await open();
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/member`, undefined, 'ephemeral');
      await waitFor(async () => (await b.exists(`${root}/member`)) !== null, 'the ephemeral to be visible to b');
      const gone = deferred();
      await b.exists(`${root}/member`, (e) => e.type === 'deleted' && gone.resolve());
      const expired = waitForState(a, 'expired', 30_000);
      await setup.backend().expire(a);
      await expired;
      await withDeadline(gone.promise, 'ephemeral removal seen by another session', 30_000);
      await rejectsWith(a.getData('/'), 'SESSION_EXPIRED');
    });

    describe('access lists', () => {
      const secret = ClusterSecret.random();
      /** A tree made by a session with the secret: dir, dir/leaf (data "v0"), dir/sub/inner. */
      const securedTree = async () => {
        const owner = await setup.openWith(secret);
        const dir = await freshRoot(owner);
        await owner.create(`${dir}/leaf`, Buffer.from('v0'));
        await owner.create(`${dir}/sub`);
        await owner.create(`${dir}/sub/inner`);
        return { owner, dir };
      };

      it('a session with the secret gives its znodes the cluster access list; one without gives open znodes', T, async () => {
        const { owner, dir } = await securedTree();
        assert.deepEqual(owner.acl, clusterAcl(secret));
        const { acl, stat } = await owner.getACL(`${dir}/leaf`);
        assert.deepEqual(acl, [
          { perms: Perm.all, scheme: 'digest', id: digestId(`${CLUSTER_USER}:${secret.key('zookeeper-digest').toString('base64url')}`) },
          { perms: Perm.read, scheme: 'digest', id: digestId(`${MONITOR_USER}:${secret.monitorPassword()}`) },
        ]);
        assert.equal(stat.dataLength, 2);
        // The ids are ZooKeeper's digest ids, computed here independently of access.ts: user:base64(SHA-1(user:password)).
        const { createHash } = await import('node:crypto');
        assert.equal(acl[0]!.id, `tidepool:${createHash('sha1').update(`tidepool:${secret.key('zookeeper-digest').toString('base64url')}`).digest('base64')}`);
        const plain = await open();
        const openDir = await freshRoot(plain);
        assert.deepEqual((await plain.getACL(openDir)).acl, OPEN_ACL);
        assert.deepEqual(plain.acl, OPEN_ACL);
      });

      it('without credentials a session can neither read nor change a secured znode (exists still answers)', T, async () => {
        const { dir } = await securedTree();
        const stranger = await open();
        const need = /cluster secret required: this session holds no credential/;
        const needRead = /cluster secret or monitor credential required to read: this session holds no credential/;
        await refused(stranger.create(`${dir}/new`), `${dir}/new`, need);
        await refused(stranger.create(`${dir}/eph`, undefined, 'ephemeral_sequential'), `${dir}/eph`, need);
        await refused(stranger.setData(`${dir}/leaf`, Buffer.from('x')), `${dir}/leaf`, need);
        await refused(stranger.delete(`${dir}/leaf`), `${dir}/leaf`, need);
        await refused(stranger.delete(`${dir}/sub/inner`), `${dir}/sub/inner`, need);
        await refused(stranger.getData(`${dir}/leaf`), `${dir}/leaf`, needRead);
        await refused(stranger.getChildren(dir), dir, needRead);
        await refused(stranger.getACL(`${dir}/leaf`), `${dir}/leaf`, needRead);
        await refused(stranger.setACL(`${dir}/leaf`, OPEN_ACL), `${dir}/leaf`, need);
        await refused(stranger.multi([{ op: 'check', path: `${dir}/leaf`, version: 0 }]), `${dir}/leaf`, needRead, 0);
        await refused(stranger.multi([{ op: 'setData', path: `${dir}/leaf`, data: Buffer.from('x') }]), `${dir}/leaf`, need, 0);
        assert.ok(await stranger.exists(`${dir}/leaf`), 'exists needs no permission (as in ZooKeeper)');
        const owner = await setup.openWith(secret);
        assert.equal((await owner.getData(`${dir}/leaf`)).data.toString(), 'v0', 'nothing changed');
        assert.deepEqual((await owner.getChildren(dir)).sort(), ['leaf', 'sub']);
      });

      it('a transaction mixing open and secured znodes is refused whole, naming the secured op', T, async () => {
        const { dir } = await securedTree();
        const stranger = await open();
        const mine = await freshRoot(stranger);
        await refused(stranger.multi([
          { op: 'create', path: `${mine}/a` },
          { op: 'setData', path: mine, data: Buffer.from('changed') },
          { op: 'create', path: `${dir}/sneaked` },
        ]), `${dir}/sneaked`, /cluster secret required/, 2);
        assert.equal(await stranger.exists(`${mine}/a`), null, 'nothing of a refused transaction is applied');
        assert.equal((await stranger.getData(mine)).data.length, 0);
      });

      it('a watch on a znode the session may not read ends: ready rejects with NO_AUTH, onEnd says failed', T, async () => {
        const { dir } = await securedTree();
        const stranger = await open();
        const ended = deferred<string>();
        const handle = watchData(stranger, `${dir}/leaf`, () => assert.fail('nothing is delivered'), { onEnd: (reason) => ended.resolve(reason) });
        await assert.rejects(withDeadline(handle.ready, 'the refused watch'), /NO_AUTH at .*\/leaf: cluster secret or monitor credential required to read/);
        assert.equal(await withDeadline(ended.promise, 'onEnd'), 'failed');
        const children = watchChildren(stranger, dir, () => assert.fail('nothing is delivered'));
        await assert.rejects(withDeadline(children.ready, 'the refused child watch'), /NO_AUTH/);
      });

      it('a monitor credential reads everything and changes nothing', T, async () => {
        const { dir } = await securedTree();
        const monitor = await setup.openWith(secret.monitorCredential());
        assert.equal((await monitor.getData(`${dir}/leaf`)).data.toString(), 'v0');
        assert.deepEqual((await monitor.getChildren(dir)).sort(), ['leaf', 'sub']);
        await monitor.multi([{ op: 'check', path: `${dir}/leaf`, version: 0 }]);
        const need = /cluster secret required: this session holds a read-only monitor credential/;
        await refused(monitor.create(`${dir}/new`), `${dir}/new`, need);
        await refused(monitor.setData(`${dir}/leaf`, Buffer.from('x')), `${dir}/leaf`, need);
        await refused(monitor.delete(`${dir}/sub/inner`), `${dir}/sub/inner`, need);
        await refused(monitor.setACL(`${dir}/leaf`, OPEN_ACL), `${dir}/leaf`, need);
        // Without ADMIN, getACL shows digests as user:x (ZooKeeper's answer).
        assert.deepEqual((await monitor.getACL(`${dir}/leaf`)).acl.map((e) => `${e.scheme}:${e.id}:${e.perms}`), [`digest:tidepool:x:${Perm.all}`, `digest:tidepool-monitor:x:${Perm.read}`]);
      });

      it("another cluster's secret is refused like no secret, and says so", T, async () => {
        const { dir } = await securedTree();
        const other = await setup.openWith(ClusterSecret.random());
        const need = /this session's secret is not one this znode's access list accepts/;
        await refused(other.create(`${dir}/new`), `${dir}/new`, need);
        await refused(other.setData(`${dir}/leaf`, Buffer.from('x')), `${dir}/leaf`, need);
        await refused(other.getData(`${dir}/leaf`), `${dir}/leaf`, need);
      });

      it('rotation: two secrets reach znodes of either; setACL narrows a znode to the new one', T, async () => {
        const { dir } = await securedTree();
        const next = ClusterSecret.random();
        const both = ClusterSecret.parse(`${next.current.toString()}\n${secret.current.toString()}\n`, 'test');
        const during = await setup.openWith(both);
        await during.setData(`${dir}/leaf`, Buffer.from('v1'));
        await during.create(`${dir}/made-during`);
        assert.deepEqual((await during.getACL(`${dir}/made-during`)).acl, clusterAcl(both));
        const old = await setup.openWith(secret);
        await old.setData(`${dir}/made-during`, Buffer.from('old still writes'));
        await during.setACL(`${dir}/made-during`, clusterAcl(next));
        await refused(old.setData(`${dir}/made-during`, Buffer.from('x')), `${dir}/made-during`, /not one this znode's access list accepts/);
        const fresh = await setup.openWith(next);
        await fresh.setData(`${dir}/made-during`, Buffer.from('new writes'));
        await rejectsWith(fresh.setACL(`${dir}/made-during`, clusterAcl(next), 0), 'BAD_VERSION'); // the list's own version is 1 now
        await rejectsWith(fresh.setACL(`${dir}/made-during`, []), 'INVALID_ACL');
      });

      it('credentials hold across a reconnect, for requests made while disconnected too', T, async () => {
        const { dir } = await securedTree();
        const c = await setup.openWith(secret, 6_000);
        await c.create(`${dir}/before`);
        const cut = await setup.backend().partition(c);
        await waitForState(c, 'disconnected', 20_000);
        // ZooKeeper's client queues it and sends it on the next connection, after the credentials; the
        // embedded backend fails requests at once while disconnected.
        const queued = c.create(`${dir}/queued`).then(() => 'created', (e: unknown) => {
          if (e instanceof CoordError && e.code === 'CONNECTION_LOSS') return 'lost';
          throw e;
        });
        cut.heal();
        assert.equal(await withDeadline(queued, 'the queued create'), setup.backend().name === 'zookeeper' ? 'created' : 'lost');
        await waitForState(c, 'connected', 20_000);
        await c.setData(`${dir}/leaf`, Buffer.from('after'));
        assert.equal((await c.getData(`${dir}/leaf`)).data.toString(), 'after');
      });

      it('an ended session\'s ephemerals under a secured znode are removed', T, async () => {
        const { owner, dir } = await securedTree();
        const a = await setup.openWith(secret);
        await a.create(`${dir}/member`, undefined, 'ephemeral');
        const expired = waitForState(a, 'expired', 30_000);
        await setup.backend().expire(a);
        await expired;
        await waitFor(async () => (await owner.exists(`${dir}/member`)) === null, 'the ephemeral to go', 30_000);
      });

      it('counts the access list in the request size: a secured transaction at the limit is accepted, one byte over refused', T, async () => {
        const c = await setup.openWith(secret);
        const root = await freshRoot(c);
        const paths = [`${root}/big-a`, `${root}/big-b`];
        const acl = aclBytes(c.acl);
        const ops = (extra: number): Op[] => {
          const room = MAX_REQUEST_BYTES - requestBytes(paths.map((path) => ({ op: 'create', path })), true, 0, acl) + extra;
          return paths.map((path, i) => ({ op: 'create', path, data: Buffer.alloc(i === 0 ? Math.floor(room / 2) : room - Math.floor(room / 2)) }));
        };
        await rejectsWith(c.multi(ops(1)), 'BAD_ARGUMENTS');
        assert.equal(requestBytes(ops(0), true, 0, acl), MAX_REQUEST_BYTES);
        await c.multi(ops(0));
        assert.equal(c.state, 'connected');
      });
    });

    it('detects expiry of a client cut off from the cluster', T, async () => {
      const a = await open(1_500);
      const b = await open();
      const root = await freshRoot(a);
      await a.create(`${root}/cut`, undefined, 'ephemeral');
      await waitFor(async () => (await b.exists(`${root}/cut`)) !== null, 'the ephemeral to be visible to b');
      const cut = await setup.backend().partition(a);
      try {
        await waitForState(a, 'expired', 20_000);
        await waitFor(async () => (await b.exists(`${root}/cut`)) === null, 'ephemeral of the cut-off session to vanish', 20_000);
      } finally {
        cut.heal();
      }
      await rejectsWith(a.exists('/'), 'SESSION_EXPIRED');
    });
  });
}
