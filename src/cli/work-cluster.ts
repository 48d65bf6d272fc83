/**
 * The cluster a command that runs work runs on: an embedded one started here (nodes in this process),
 * or the one registered at --zk. With a dashboard, embedded nodes publish their figures twice a
 * second for it; without one, as often as nodes do by default, or (`quiet`) not at all.
 */
import { Cluster } from '../runtime/client/cluster.js';
import { connectCluster } from './connection.js';
import { DASHBOARD_TICK_MS } from './dashboard-option.js';
import { parseDuration } from './settings/durations.js';
import { DEFAULT_TIMEOUT } from './settings/kinds.js';

export interface WorkClusterOptions {
  zk?: string;
  /** With `zk`: how long to wait for ZooKeeper (default: the commands' default). */
  timeout?: number;
  /** Embedded nodes to start (ignored with `zk`). */
  nodes: number;
  workers: number;
  dashboard: boolean;
  /** Without a dashboard, embedded nodes publish no figures (the search and iterative runs, as benchmarks run them). */
  quiet?: boolean;
  /** With `zk`: the cluster secret, to submit large inputs and ship code. */
  secret?: Buffer | string;
}

export function workCluster(opts: WorkClusterOptions): Promise<Cluster> {
  if (opts.zk !== undefined) return connectCluster(opts.zk, opts.timeout ?? parseDuration(DEFAULT_TIMEOUT)!, opts.secret !== undefined ? { secret: opts.secret } : {});
  const progressIntervalMs = opts.dashboard ? DASHBOARD_TICK_MS : opts.quiet ? 0 : undefined;
  return Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, ...(progressIntervalMs !== undefined ? { progressIntervalMs } : {}) });
}
