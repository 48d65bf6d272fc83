/**
 * The two coordination backends as the contract suite sees them: how to open a session,
 * and how to inflict the two failures a session can suffer (a transient connection loss, expiry).
 */
import zookeeper from 'node-zookeeper-client';
import { after, before } from 'node:test';
import { sessionAccess } from '../../src/coord/access.js';
import { EmbeddedClient } from '../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../src/coord/embedded/embedded-server.js';
import type { CoordClient } from '../../src/coord/types.js';
import type { SecretInput } from '../../src/util/cluster-secret.js';
import { ZooKeeperClient } from '../../src/coord/zookeeper/zookeeper-client.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { waitFor } from '../support/wait.js';

export interface Backend {
  name: 'embedded' | 'zookeeper';
  /** Opens a session; with `secret`, one that presents the cluster's credentials (or a monitor's). */
  connect(opts?: { sessionTimeoutMs?: number; secret?: SecretInput }): Promise<CoordClient>;
  /** Breaks the client's connection once; the session survives and reconnects. */
  interrupt(client: CoordClient): Promise<void>;
  /** Makes the cluster expire the client's session. */
  expire(client: CoordClient): Promise<void>;
  /** Partitions the client from the cluster until `heal()` (ZooKeeper: a silent link; embedded: disconnected). */
  partition(client: CoordClient): Promise<{ heal(): void }>;
  close(): Promise<void>;
}

export function embeddedBackend(): Backend {
  const server = new EmbeddedServer();
  return {
    name: 'embedded',
    connect: async (opts) => new EmbeddedClient(server, opts?.sessionTimeoutMs ?? 4_000, sessionAccess(opts?.secret)),
    interrupt: async (client) => {
      server.disconnect(client.sessionId);
      server.reconnect(client.sessionId);
    },
    expire: async (client) => server.expire(client.sessionId),
    partition: async (client) => {
      server.disconnect(client.sessionId);
      return { heal: () => server.reconnect(client.sessionId) };
    },
    close: async () => undefined,
  };
}

/** A 3-server ensemble; each client connects through its own proxy so faults hit only that client. */
export async function zookeeperBackend(ensemble?: ZkEnsemble): Promise<Backend & { ensemble: ZkEnsemble }> {
  const zk = ensemble ?? (await startEnsemble({ size: 3 }));
  const proxies = new Map<CoordClient, TcpProxy[]>();
  return {
    name: 'zookeeper',
    ensemble: zk,
    connect: async (opts) => {
      const list = await Promise.all(zk.servers.map((s) => startTcpProxy({ host: '127.0.0.1', port: s.clientPort })));
      const client = await ZooKeeperClient.connect({
        hosts: list.map((p) => ({ host: '127.0.0.1', port: p.port })),
        sessionTimeoutMs: opts?.sessionTimeoutMs ?? 4_000,
        access: sessionAccess(opts?.secret),
      });
      proxies.set(client, list);
      return client;
    },
    interrupt: async (client) => {
      for (const p of proxies.get(client) ?? []) p.cutAll();
    },
    expire: async (client) => {
      // Open the same session from a second connection and close it: the ensemble ends the session. Under load
      // the close may not reach the ensemble before the twin's socket goes (and the client, moved off its server,
      // reattaches): a further twin tells — the ensemble refuses it once the session has really ended.
      const zkClient = client as ZooKeeperClient;
      for (let attempt = 1; attempt <= 5; attempt++) {
        const twin = zookeeper.createClient(zk.hosts, {
          sessionTimeout: client.sessionTimeoutMs,
          sessionId: Buffer.from(client.sessionId, 'hex'),
          sessionPassword: zkClient.sessionPassword,
        } as never);
        const attached = await new Promise<boolean>((resolve) => {
          twin.once('connected', () => resolve(true));
          twin.once('expired', () => resolve(false));
          twin.connect();
        });
        if (!attached) {
          twin.close();
          return;
        }
        await new Promise<void>((resolve) => {
          twin.once('disconnected', () => resolve());
          twin.close();
        });
      }
      throw new Error(`session ${client.sessionId} did not end after 5 closes`);
    },
    partition: async (client) => {
      const list = proxies.get(client) ?? [];
      for (const p of list) p.setBlackhole(true);
      return { heal: () => list.forEach((p) => p.setBlackhole(false)) };
    },
    close: async () => {
      for (const list of proxies.values()) await Promise.all(list.map((p) => p.close()));
      if (!ensemble) await zk.stop();
    },
  };
}

export { waitFor };

/**
 * Registers a suite's backend lifecycle: the backend is made before the suite's tests and closed
 * after them, together with every session opened through `open`.
 */
export function useBackend<B extends Backend>(make: () => Promise<B>, defaultTimeoutMs?: number): {
  backend: () => B;
  open: (sessionTimeoutMs?: number) => Promise<CoordClient>;
  /** A session presenting `secret` (the cluster secret, several while rotating, or a monitor credential). */
  openWith: (secret: SecretInput, sessionTimeoutMs?: number) => Promise<CoordClient>;
} {
  let backend: B | undefined;
  const sessions: CoordClient[] = [];
  before(async () => {
    backend = await make();
  });
  after(async () => {
    await Promise.all(sessions.map((c) => c.close().catch(() => undefined)));
    await backend?.close();
  });
  return {
    backend: () => backend!,
    open: async (sessionTimeoutMs = defaultTimeoutMs) => {
      const c = await backend!.connect(sessionTimeoutMs ? { sessionTimeoutMs } : undefined);
      sessions.push(c);
      return c;
    },
    openWith: async (secret, sessionTimeoutMs = defaultTimeoutMs) => {
      const c = await backend!.connect({ secret, ...(sessionTimeoutMs ? { sessionTimeoutMs } : {}) });
      sessions.push(c);
      return c;
    },
  };
}
