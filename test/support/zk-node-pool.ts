/**
 * Test support: a 3-server ZooKeeper ensemble with `count` tidepool node processes on it, started
 * before a suite's tests and killed after them (`useZkNodePool(3)` inside a `describe`).
 */
import { after, before } from 'node:test';
import { secretFile, startNodeProcess, type NodeProcess } from './node-process.js';
import { startEnsemble, type ZkEnsemble } from './zk-ensemble.js';

export interface ZkNodePool {
  /** The ensemble's connection string (set once the suite's `before` has run). */
  readonly zk: string;
  readonly processes: NodeProcess[];
}

export function useZkNodePool(count: number, opts: { workers?: number } = {}): ZkNodePool {
  let ensemble: ZkEnsemble | undefined;
  const processes: NodeProcess[] = [];
  before(async () => {
    ensemble = await startEnsemble({ size: 3 });
    const secret = secretFile();
    processes.push(...await Promise.all(Array.from({ length: count }, () => startNodeProcess({ zk: ensemble!.connectionString, secretFile: secret, workers: opts.workers ?? 1 }))));
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
  };
}
