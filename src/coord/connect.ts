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
 * `zk://host:port,…[/chroot]` connects to an Apache ZooKeeper ensemble.
 */
export async function connect(connection?: string, options: ConnectOptions = {}): Promise<CoordClient> {
  const target = parseConnectionString(connection);
  if (target.backend === 'embedded') return new EmbeddedClient(embeddedServer(target.name), options.sessionTimeoutMs);
  return ZooKeeperClient.connect({ ...options, hosts: target.hosts, chroot: target.chroot });
}
