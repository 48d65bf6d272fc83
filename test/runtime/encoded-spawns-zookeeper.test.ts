/**
 * Spawned children that reach the node as their encoded first records, on a real ZooKeeper ensemble: a node
 * crashes (its session expired by the ensemble) after part of its children completed; the next leader
 * recovers exactly the others and every child counts once (encoded-spawns.ts, crashAfterPartDone).
 */
import { after, before, describe, it } from 'node:test';
import type { CoordClient } from '../../src/coord/types.js';
import { zookeeperBackend, type Backend } from '../coord/backends.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { crashAfterPartDone } from './encoded-spawns.js';

describe('encoded spawned children on ZooKeeper', () => {
  let zk: ZkEnsemble;
  let backend: Backend;
  const clients: CoordClient[] = [];
  before(async () => {
    zk = await startEnsemble({ size: 1 });
    backend = await zookeeperBackend(zk);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await backend?.close();
    await zk?.stop();
  });

  it('a crash after part of a batch completed: exactly the others are recovered, each child counts once', { timeout: 120_000 }, async () => {
    const connect = async () => {
      const c = await backend.connect({ sessionTimeoutMs: 10_000 });
      clients.push(c);
      return c;
    };
    await crashAfterPartDone(connect, (c) => backend.expire(c));
  });
});
