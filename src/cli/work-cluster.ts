/**
 * The cluster a command that runs work runs on: an embedded one started here (nodes in this process),
 * or the one registered at --zk. With a dashboard, embedded nodes publish their figures twice a
 * second for it; without one, as often as nodes do by default, or (`quiet`) not at all.
 */
import { isLocalModule } from '../data/code-bundle.js';
import { Cluster } from '../runtime/client/cluster.js';
import { isInstalledFile } from '../util/installation.js';
import type { SecretInput } from '../util/cluster-secret.js';
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
  /** With `zk`: the cluster secret, to submit (it signs the jobs). */
  secret?: SecretInput;
  /**
   * With `zk` and the secret: whether this client serves large inputs and shipped code to the job's nodes
   * (which must then reach it). Default false: it signs and submits, and its jobs' roots stay in the ledger.
   */
  serveData?: boolean;
}

/** What a command's help says of a module its nodes load (`iterate MODULE`, `malleable run MODULE`). */
export const MODULE_ON_NODES = `A module is loaded by every node: with --zk, a file outside tidepool's installation is shipped from here
(signed with the cluster secret; the nodes must reach this machine), or give a package the nodes have installed.`;

/** Whether the nodes get `module` from this client (a file outside tidepool's installation): it then serves the data plane. */
export function shipsModule(module: string): boolean {
  return isLocalModule(module) && !isInstalledFile(module);
}

export function workCluster(opts: WorkClusterOptions): Promise<Cluster> {
  if (opts.zk !== undefined) {
    return connectCluster(opts.zk, opts.timeout ?? parseDuration(DEFAULT_TIMEOUT)!, { ...(opts.secret !== undefined ? { secret: opts.secret } : {}), serveData: opts.serveData === true });
  }
  const progressIntervalMs = opts.dashboard ? DASHBOARD_TICK_MS : opts.quiet ? 0 : undefined;
  return Cluster.embedded({ nodes: opts.nodes, workers: opts.workers, ...(progressIntervalMs !== undefined ? { progressIntervalMs } : {}) });
}
