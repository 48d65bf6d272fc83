import { sessionAccess } from './access.js';
import { parseConnectionString } from './connection-string.js';
import { EmbeddedClient } from './embedded/embedded-client.js';
import { EmbeddedServer } from './embedded/embedded-server.js';
import type { ConnectOptions, CoordClient } from './types.js';
import { ZooKeeperClient } from './zookeeper/zookeeper-client.js';

const embeddedServers = new Map<string, EmbeddedServer>();

/** The process-wide embedded coordination service of that name (created on first use). */
export function embeddedServer(name = 'default'): EmbeddedServer {
  let server = embeddedServers.get(name);
  if (!server) {
    server = new EmbeddedServer();
    embeddedServers.set(name, server);
  }
  return server;
}

/**
 * Opens a coordination session. `embedded` (the default) needs no external service;
 * `zk://host:port,…[/chroot]` connects to an Apache ZooKeeper ensemble. With `secret` the session
 * presents the cluster's credentials and its znodes carry the cluster's access list (access.ts).
 */
export async function connect(connection?: string, options: ConnectOptions = {}): Promise<CoordClient> {
  const target = parseConnectionString(connection);
  const { secret, ...rest } = options;
  const access = sessionAccess(secret);
  if (target.backend === 'embedded') return new EmbeddedClient(embeddedServer(target.name), rest.sessionTimeoutMs, access);
  return ZooKeeperClient.connect({ ...rest, hosts: target.hosts, chroot: target.chroot, access });
}
