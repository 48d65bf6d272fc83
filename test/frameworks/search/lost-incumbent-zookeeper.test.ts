/**
 * A branch-and-bound keeps the optimum its finding run published when that run's node crashes before the
 * task completes (lost-incumbent.ts), on a 3-server ZooKeeper ensemble: two node processes, one killed with
 * SIGKILL (its session then expires).
 */
import { describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { useZkNodePool } from '../../support/zk-node-pool.js';
import { optimumFoundByALostRun } from './lost-incumbent.js';

describe('branch-and-bound: the optimum of a run that does not count (ZooKeeper)', () => {
  const pool = useZkNodePool(2);

  it('a node process is killed after publishing the optimum: the job answers with it, each search node counted once', { timeout: 180_000 }, async () => {
    const cluster = await Cluster.connect(pool.zk, { secret: pool.secret });
    try {
      await optimumFoundByALostRun(cluster, async (id) => {
        const victim = pool.processes.find((p) => p.id === id)!;
        victim.kill('SIGKILL');
        await victim.exited;
      });
    } finally {
      await cluster.close();
    }
  });
});
