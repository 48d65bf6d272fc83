/**
 * The cluster a command that runs work runs on: an embedded one started here (nodes in this process),
 * or the one registered at --zk. With a dashboard, embedded nodes publish their figures twice a
 * second for it; without one, not at all (as benchmarks run).
 */
import { Cluster } from '../runtime/cluster.js';
import { connectCluster } from './connection.js';
import { DASHBOARD_TICK_MS } from './dashboard-option.js';

export interface WorkClusterOptions {
  zk?: string;
  timeout: number;
  /** Embedded nodes to start (ignored with `zk`). */
  nodes: number;
  workers: number;
  dashboard: boolean;
  /** With `zk`: the cluster secret, to submit large inputs and ship code. */
  secret?: Buffer | string;
}

export function workCluster(opts: WorkClusterOptions): Promise<Cluster> {
  if (opts.zk !== undefined) return connectCluster(opts.zk, opts.timeout, opts.secret !== undefined ? { secret: opts.secret } : {});
  return Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, progressIntervalMs: opts.dashboard ? DASHBOARD_TICK_MS : 0 });
}
