/**
 * Test support: a 3-server ZooKeeper ensemble with `count` tidepool node processes on it, started
 * before a suite's tests and killed after them (`useZkNodePool(3)` inside a `describe`).
 */
import { after, before } from 'node:test';
import type { ClusterSecret } from '../../src/util/cluster-secret.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from './node-process.js';
import { startEnsemble, type ZkEnsemble } from './zk-ensemble.js';

export interface ZkNodePool {
  /** The ensemble's connection string (set once the suite's `before` has run). */
  readonly zk: string;
  readonly processes: NodeProcess[];
  /** The file holding the nodes' cluster secret, and the secret (clients connect with it). */
  readonly secretFile: string;
  readonly secret: ClusterSecret;
}

export function useZkNodePool(count: number, opts: { workers?: number } = {}): ZkNodePool {
  let ensemble: ZkEnsemble | undefined;
  const processes: NodeProcess[] = [];
  const file = secretFile();
  before(async () => {
    ensemble = await startEnsemble({ size: 3 });
    processes.push(...await Promise.all(Array.from({ length: count }, () => startNodeProcess({ zk: ensemble!.connectionString, secretFile: file, workers: opts.workers ?? 1 }))));
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await ensemble?.stop();
  });
  return {
    get zk() {
      if (!ensemble) throw new Error('the ZooKeeper pool is not started yet (use it inside a test)');
      return ensemble.connectionString;
    },
    processes,
    secretFile: file,
    secret: secretIn(file),
  };
}
