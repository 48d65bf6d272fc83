/**
 * Test support: a ZooKeeper ensemble with one server on each of some test hosts (hosts.ts), each
 * listening on its host's address with the standard ports (every host has an address of its own):
 * 2181 for clients, 2888 and 3888 between servers. The test process probes the servers through the
 * bridge; `connectionString` is what clients inside hosts use.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { log4jProperties, SERVING_MODES, serverMode, zooCfg, zookeeperJavaArgs } from '../../src/cli/local-cluster/zookeeper-server.js';
import type { HostProcess, TestHost } from './hosts.js';

export const ZK_CLIENT_PORT = 2181;

export interface HostZkServer {
  id: number;
  host: TestHost;
  /** "address:2181" */
  address: string;
  readonly process: HostProcess | undefined;
  /** Started by the test and not killed since: a wanted server that has ended has crashed. */
  readonly wanted: boolean;
  /** Starts (again) with the same data; does not wait for it to serve. */
  start(): void;
  /** SIGKILL, then wait for the JVM to end. */
  kill(): Promise<void>;
  logFile: string;
}

export interface HostZkEnsemble {
  servers: HostZkServer[];
  /** zk://a:2181,b:2181,… */
  connectionString: string;
  /** The server leading now (asks each `srvr` through the bridge); throws unless exactly one leads. */
  leader(): Promise<HostZkServer>;
  /** Resolves once every started server serves and one leads (throws at the deadline, with each server's state). */
  waitForQuorum(timeoutMs?: number): Promise<void>;
}

export interface HostZkOptions {
  tickTime?: number;
  minSessionTimeout?: number;
  maxSessionTimeout?: number;
  timeoutMs?: number;
  /**
   * Where server `from` dials server `to` (positions in `hosts`) for the quorum and the election:
   * through latency proxies, say. Default: `to`'s own address, ports 2888 and 3888.
   */
  peerRoute?: (from: number, to: number) => { host: string; quorumPort: number; electionPort: number };
}

/** One ZooKeeper server on each of `hosts` (myid = position + 1); resolves once they have a quorum. */
export async function startHostEnsemble(hosts: readonly TestHost[], opts: HostZkOptions = {}): Promise<HostZkEnsemble> {
  const tickTime = opts.tickTime ?? 200;
  const direct = hosts.map((h, i) => ({ id: i + 1, host: h.address, quorumPort: 2888, electionPort: 3888 }));
  // Each server binds its own line's address and ports; it dials the others where peerRoute says.
  const peersOf = (from: number) => direct.map((own, to) => (to === from || !opts.peerRoute ? own : { id: own.id, ...opts.peerRoute(from, to) }));
  const servers: HostZkServer[] = hosts.map((host, i) => {
    const peers = peersOf(i);
    const id = i + 1;
    const dir = host.dir(`zookeeper-${id}`);
    const dataDir = path.join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, 'myid'), `${id}\n`);
    writeFileSync(path.join(dir, 'zoo.cfg'), zooCfg({
      dataDir, clientAddress: host.address, clientPort: ZK_CLIENT_PORT, peers, tickTime,
      minSessionTimeout: opts.minSessionTimeout ?? tickTime * 2, maxSessionTimeout: opts.maxSessionTimeout ?? 60_000, disposable: true,
    }));
    const logFile = path.join(dir, 'zookeeper.log');
    writeFileSync(path.join(dir, 'log4j.properties'), log4jProperties(logFile));
    let proc: HostProcess | undefined;
    let wanted = false;
    return {
      id,
      host,
      address: `${host.address}:${ZK_CLIENT_PORT}`,
      logFile,
      get process() {
        return proc;
      },
      get wanted() {
        return wanted;
      },
      start() {
        wanted = true;
        proc = host.spawn('java', zookeeperJavaArgs(dir), { cwd: dir });
      },
      async kill() {
        wanted = false;
        proc?.kill('SIGKILL');
        await proc?.exited;
      },
    };
  });
  const ensemble: HostZkEnsemble = {
    servers,
    connectionString: `zk://${servers.map((s) => s.address).join(',')}`,
    async leader() {
      const modes = await Promise.all(servers.map((s) => serverMode(s.host.address, ZK_CLIENT_PORT)));
      const leaders = servers.filter((_, i) => modes[i]!.mode === 'leader' || modes[i]!.mode === 'standalone');
      if (leaders.length !== 1) throw new Error(`expected one ZooKeeper leader, found ${leaders.length}: ${modes.map((m, i) => `${servers[i]!.host.name}: ${m.seen}`).join('; ')}`);
      return leaders[0]!;
    },
    async waitForQuorum(timeoutMs = opts.timeoutMs ?? 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const running = servers.filter((s) => s.wanted);
        const modes = await Promise.all(running.map((s) => serverMode(s.host.address, ZK_CLIENT_PORT)));
        if (running.length > 0 && modes.every((m) => SERVING_MODES.has(m.mode ?? '')) && modes.filter((m) => m.mode === 'leader' || m.mode === 'standalone').length === 1) return;
        const dead = running.filter((s) => s.process?.exitCode !== undefined);
        if (Date.now() > deadline || dead.length > 0) {
          const states = servers.map((s) => `${s.host.name}: ${!s.wanted ? 'stopped' : s.process?.exitCode !== undefined ? `ended (${s.process?.exitCode}), see ${s.logFile}` : modes[running.indexOf(s)]?.seen}`);
          throw new Error(`ZooKeeper quorum on ${servers.map((s) => s.host.name).join(', ')}: not reached within ${timeoutMs} ms (${states.join('; ')})`);
        }
        await delay(100);
      }
    },
  };
  for (const s of servers) s.start();
  await ensemble.waitForQuorum();
  return ensemble;
}
