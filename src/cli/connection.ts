/**
 * Connecting to a cluster's ZooKeeper ensemble from a command: within the `--timeout` the user gave,
 * and when no server answers, an error that names the address and the time waited.
 */
import { connect } from '../coord/connect.js';
import { isCoordError } from '../coord/errors.js';
import type { ConnectOptions, CoordClient } from '../coord/types.js';
import { parseConnectionString } from '../coord/connection-string.js';
import { Cluster } from '../runtime/client/cluster.js';
import type { SecretInput } from '../util/cluster-secret.js';
import { clientAddress } from './addresses.js';
import { formatDuration } from './settings/durations.js';

/** The error a command prints when the ensemble at `zk` did not answer within `timeoutMs`. */
export function unreachable(err: unknown, zk: string, timeoutMs: number): unknown {
  if (!isCoordError(err, 'CONNECTION_LOSS')) return err;
  return new Error(`no ZooKeeper server at ${zk} answered within ${formatDuration(timeoutMs)} (--timeout)`);
}

/** A coordination session with the ensemble at `zk`. */
export async function connectZk(zk: string, timeoutMs: number, options: Omit<ConnectOptions, 'connectTimeoutMs'> = {}): Promise<CoordClient> {
  try {
    return await connect(zk, { ...options, connectTimeoutMs: timeoutMs });
  } catch (err) {
    throw unreachable(err, zk, timeoutMs);
  }
}

/**
 * A client of the cluster registered at `zk` (`Cluster.connect`). Its data plane, when it serves one (code
 * it ships, large inputs), listens where the nodes reach it: the address of this machine towards
 * ZooKeeper, unless ZooKeeper runs here.
 */
export async function connectCluster(zk: string, timeoutMs: number, opts: { secret?: SecretInput; serveData?: boolean } = {}): Promise<Cluster> {
  const target = parseConnectionString(zk);
  const host = await clientAddress(target.backend === 'zookeeper' ? target.hosts : []);
  try {
    return await Cluster.connect(zk, { ...opts, ...(host !== undefined ? { host } : {}), connectTimeoutMs: timeoutMs });
  } catch (err) {
    throw unreachable(err, zk, timeoutMs);
  }
}

/**
 * Runs `run` with a session to `zk` holding `credential` (the cluster secret to change the cluster;
 * to read, the secret or a monitor credential, or none on an open tree), closed afterwards.
 */
export async function withZk<T>(zk: string, timeoutMs: number, credential: SecretInput | undefined, run: (client: CoordClient) => Promise<T>): Promise<T> {
  const client = await connectZk(zk, timeoutMs, credential !== undefined ? { secret: credential } : {});
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}
