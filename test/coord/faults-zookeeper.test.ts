/**
 * Fault tests on a real 3-server ZooKeeper ensemble: a follower stops, the leader stops, and a
 * client's TCP connection is cut while its termination transactions are in flight. Recipes keep
 * working and termination fires exactly once, after the last task. A server that accepts connections
 * and answers nothing does not hold a client until its session is lost.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { describe, it } from 'node:test';
import { GlobalVariables } from '../../src/coord/recipes/global-variables.js';
import { GroupMembership } from '../../src/coord/recipes/group-membership.js';
import { LeaderElection } from '../../src/coord/recipes/leader-election.js';
import { waitForState } from '../../src/coord/tree-ops.js';
import type { CoordClient } from '../../src/coord/types.js';
import { ZooKeeperClient } from '../../src/coord/zookeeper/zookeeper-client.js';
import { Rng } from '../../src/util/rng.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { useBackend, zookeeperBackend } from './backends.js';
import { runTerminationProperty } from './termination-property.js';

const T = { timeout: 180_000 };

describe('ZooKeeper ensemble faults', () => {
  const setup = useBackend(() => zookeeperBackend(), 10_000);
  const open = () => setup.open();

  it('a follower stops mid-run: work continues and termination is exact', T, async () => {
    const zk = setup.backend().ensemble;
    const leader = await zk.leader();
    const follower = zk.servers.find((s) => s !== leader)!;
    const clients = await Promise.all([open(), open(), open()]);
    const watcherClient = await open();
    await runTerminationProperty({
      seed: 21, size: 1500, clients, watcherClient, maxBatch: 8, timeoutMs: 120_000,
      onCompletionIssued: async (count) => {
        if (count === 400) await follower.stop();
      },
    });
    assert.equal(follower.running, false);
    await follower.start();
    await zk.waitForQuorum();
  });

  it('the leader stops mid-run: clients reconnect, recipes recover, termination is exact', T, async () => {
    const zk = setup.backend().ensemble;
    const clients = await Promise.all([open(), open(), open()]);
    const watcherClient = await open();
    const group = `/faults/${randomUUID()}`;
    const members = clients.map((c) => new GroupMembership(c, `${group}/members`));
    await Promise.all(members.map((m, i) => m.join(`n${i}`, { workers: 1 })));
    await Promise.all(members.map((m) => m.watch()));
    const elections = clients.map((c, i) => new LeaderElection(c, `${group}/election`, { id: `n${i}`, data: null }));
    for (const e of elections) await e.start();
    await elections[0]!.whenElected();
    const vars = clients.map((c) => new GlobalVariables(c, `${group}/vars`));
    await Promise.all(vars.map((v) => v.define<number>('best', { rule: 'min' })));
    await vars[0]!.setVar('best', 1000);

    const oldLeader = await zk.leader();
    await runTerminationProperty({
      seed: 22, size: 1500, clients, watcherClient, maxBatch: 1, timeoutMs: 120_000,
      onCompletionIssued: async (count) => {
        if (count === 300) await oldLeader.stop();
      },
    });
    await zk.waitForQuorum();
    const newLeader = await zk.leader();
    assert.notEqual(newLeader.id, oldLeader.id, 'a new ZooKeeper leader was elected');
    // Sessions survived the failover: membership and the elected leader are unchanged.
    for (const m of members) await waitFor(() => m.view().size === 3, 'all members still present');
    assert.equal(elections[0]!.isLeader, true);
    assert.equal(elections.filter((e) => e.isLeader).length, 1);
    // Writes work again and propagate.
    await vars[2]!.setVar('best', 17);
    for (const v of vars) await waitFor(() => v.getVar<number>('best') === 17, 'variable update after failover');
    await oldLeader.start();
    await zk.waitForQuorum();
    members.forEach((m) => m.stop());
    vars.forEach((v) => v.stop());
  });

  it('connections cut while termination transactions are in flight: exact, exactly once', T, async () => {
    const rng = new Rng(23);
    const raw = await Promise.all([open(), open(), open()]);
    let cuts = 0;
    // Each multi has a 10% chance of having its connection cut right after it is sent, so some
    // commit with the reply lost and some never reach the server: the cases Algorithm 2 guards.
    const clients = raw.map((c) => new Proxy(c, {
      get(target, prop, receiver) {
        if (prop !== 'multi') return Reflect.get(target, prop, receiver) as unknown;
        return (ops: Parameters<CoordClient['multi']>[0]) => {
          const result = target.multi(ops);
          if (rng.chance(0.1)) {
            cuts++;
            setImmediate(() => void setup.backend().interrupt(target));
          }
          return result;
        };
      },
    }));
    const watcherClient = await open();
    const result = await runTerminationProperty({ seed: 23, size: 1500, clients, watcherClient, maxBatch: 1, timeoutMs: 120_000 });
    assert.ok(cuts > 10, `connections were cut mid-transaction (${cuts})`);
    assert.ok(result.retries > 0, 'some transactions had to be retried');
  });

  it('an expired session leaves every other member view (expiry forced by the ensemble)', T, async () => {
    const [a, b, c] = await Promise.all([open(), open(), open()]);
    const path = `/faults/${randomUUID()}/members`;
    const views = [a, b, c].map((s) => new GroupMembership(s, path));
    await Promise.all(views.map((v, i) => v.join(`m${i}`)));
    await Promise.all(views.map((v) => v.watch()));
    await Promise.all(views.map((v) => waitFor(() => v.view().size === 3, 'full view')));
    await setup.backend().expire(b);
    await withDeadline(Promise.all([0, 2].map((i) => waitFor(() => !views[i]!.view().has('m1'), 'm1 to leave', 30_000))), 'views to update', 40_000);
    await waitForState(b, 'expired', 20_000); // the expired client learns it when it reconnects
    views.forEach((v) => v.stop());
  });
  it('a server that accepts connections but never answers: the client drops the attempt and reconnects elsewhere within its session', T, async () => {
    const zk = setup.backend().ensemble;
    // Two doors to the same server. A door in silent mode accepts and forwards nothing, for good: a
    // hung server, or one cut off behind something that accepts for it.
    let silent = false;
    const conns = new Set<net.Socket>();
    const door = async () => {
      const server = net.createServer((c) => {
        conns.add(c);
        c.on('error', () => {});
        c.on('close', () => conns.delete(c));
        if (silent) return;
        const up = net.connect({ host: '127.0.0.1', port: zk.servers[0]!.clientPort });
        up.on('error', () => c.destroy());
        c.on('close', () => up.destroy());
        up.on('close', () => c.destroy());
        c.pipe(up).pipe(c);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    };
    const doors = [await door(), await door()];
    const client = await ZooKeeperClient.connect({ hosts: doors.map((d) => ({ host: '127.0.0.1', port: (d.address() as net.AddressInfo).port })), sessionTimeoutMs: 9_000 });
    try {
      const session = client.sessionId;
      // Every door silent, the connection dropped: the next attempt gets no answer, ever.
      silent = true;
      const dropped = [...conns];
      conns.clear();
      for (const c of dropped) c.destroy();
      const cutAt = Date.now();
      await waitFor(() => conns.size > 0, 'the client to try a silent door', 10_000);
      silent = false; // new connections get through again; the one being attempted stays silent
      assert.equal(client.state, 'disconnected');
      await waitForState(client, 'connected', 15_000);
      assert.equal(client.sessionId, session, 'the same session');
      assert.ok(Date.now() - cutAt < 9_000, `reconnected ${Date.now() - cutAt} ms after the cut, within the session timeout`);
      await client.exists('/');
    } finally {
      await client.close();
      for (const d of doors) d.close();
      for (const c of conns) c.destroy();
    }
  });
});
