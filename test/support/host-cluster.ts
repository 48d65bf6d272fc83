/**
 * Test support: a tidepool cluster across test hosts (hosts.ts) as issue 27's tests want it: a
 * 3-server ZooKeeper ensemble on hosts zk1–zk3, `tidepool node`s on n1 and n2, and a client host from
 * which `tidepool` commands run. Each host sees only its own installation, at a path of its own.
 *
 * With `latency`, every link carries it: each ZooKeeper server's client, quorum and election ports,
 * and each node's port, are reached through a latency proxy on the bridge (hosts.latency), so
 * client–ZooKeeper, node–ZooKeeper, ZooKeeper–ZooKeeper and node–node traffic all cross one; nodes
 * listen on their host's address and advertise their proxy. `setLatency` changes it while the
 * cluster runs (start with `{ latencyMs: 0 }` to have the proxies in place), on every link or on the
 * node links only. With `lossPercent` (or `setLoss`), every host drops that share of the packets it
 * receives (nftables).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { startHostEnsemble, ZK_CLIENT_PORT, type HostZkEnsemble } from './host-zookeeper.js';
import { TestHosts, type HostNode, type RunResult, type TestHost } from './hosts.js';
import type { LatencyOptions, LatencyProxy } from './latency-proxy.js';

/** The port nodes listen on in their host (each host has an address of its own). */
export const NODE_PORT = 7400;
/** The ensemble's tick (ZooKeeper's tickTime): see where the ensemble starts. */
const ZK_TICK_MS = 400;
/** A node's ZooKeeper session (src/cli/commands/node.ts). */
export const NODE_SESSION_MS = 6_000;

export interface HostClusterOptions {
  /** Added on every link, through proxies. */
  latency?: LatencyOptions;
  /** Share of the packets every host drops on arrival (a whole number of percent). */
  lossPercent?: number;
  /** Worker threads per node (default 1). */
  workers?: number;
  /** More `tidepool node` arguments for every node (`--metrics-port 9464`, say). */
  nodeArgs?: readonly string[];
}

export class HostCluster {
  /** The running node of each node host (absent while it is down). */
  readonly nodes = new Map<TestHost, HostNode>();
  /** Every node's end so far, with the last lines it logged (what a failed test reports). */
  readonly nodeEnds: string[] = [];
  /** The proxy in front of each node's port, by host. */
  private readonly nodeProxies = new Map<TestHost, LatencyProxy>();
  /** The proxies in front of the ZooKeeper servers (client, quorum and election ports). */
  private readonly zkProxies: LatencyProxy[] = [];

  private constructor(
    readonly hosts: TestHosts,
    readonly zk: HostZkEnsemble,
    /** The ensemble as processes in hosts dial it: host:port,… (proxies with latency). */
    readonly zkAddress: string,
    readonly secretFile: string,
    private readonly opts: HostClusterOptions,
  ) {}

  get nodeHosts(): TestHost[] {
    return [this.hosts.host('n1'), this.hosts.host('n2')];
  }

  get client(): TestHost {
    return this.hosts.host('client');
  }

  static async start(opts: HostClusterOptions = {}): Promise<HostCluster> {
    const hosts = await TestHosts.create({ names: ['zk1', 'zk2', 'zk3', 'n1', 'n2', 'client'] });
    try {
      const zkHosts = ['zk1', 'zk2', 'zk3'].map((n) => hosts.host(n));
      let zkAddress = zkHosts.map((h) => `${h.address}:${ZK_CLIENT_PORT}`).join(',');
      let peerRoute: ((from: number, to: number) => { host: string; quorumPort: number; electionPort: number }) | undefined;
      const zkProxies: LatencyProxy[] = [];
      const nodeProxies = new Map<TestHost, LatencyProxy>();
      if (opts.latency) {
        const proxy = async (host: TestHost, port: number) => {
          const p = await hosts.latency({ host: host.address, port }, opts.latency!);
          zkProxies.push(p);
          return p;
        };
        zkAddress = (await Promise.all(zkHosts.map((h) => proxy(h, ZK_CLIENT_PORT)))).map((p) => p.address).join(',');
        // One proxy per server and port, shared by the servers that dial it.
        const quorum = await Promise.all(zkHosts.map((h) => proxy(h, 2888)));
        const election = await Promise.all(zkHosts.map((h) => proxy(h, 3888)));
        peerRoute = (_from, to) => ({ host: hosts.bridgeAddress, quorumPort: quorum[to]!.port, electionPort: election[to]!.port });
        for (const n of ['n1', 'n2']) nodeProxies.set(hosts.host(n), await hosts.latency({ host: hosts.host(n).address, port: NODE_PORT }, opts.latency));
      }
      if (opts.lossPercent) for (const h of hosts.hosts) await hosts.dropShare(h, opts.lossPercent);
      // A follower that hears nothing from the leader for syncLimit (5) ticks leaves the quorum and drops
      // its clients' connections. At the loopback tests' 200 ms tick that is 1 s, which two lost packets in
      // a row on a 100 ms ± 20 ms link reach (TCP's retransmission timeout then doubles from ~0.3 s):
      // clients saw CONNECTION_LOSS on slow lossy links. 400 ms gives 2 s, and still detects a leader
      // cut off well within a node's 6 s session.
      const zk = await startHostEnsemble(zkHosts, { ...(peerRoute ? { peerRoute } : {}), tickTime: ZK_TICK_MS, timeoutMs: 180_000 });
      const secretFile = `${hosts.host('client').dir()}/secret`;
      writeFileSync(secretFile, `across-hosts-${process.pid}-${Date.now()}-secret`, { mode: 0o600 });
      const cluster = new HostCluster(hosts, zk, zkAddress, secretFile, opts);
      for (const [h, p] of nodeProxies) cluster.nodeProxies.set(h, p);
      cluster.zkProxies.push(...zkProxies);
      return cluster;
    } catch (err) {
      await hosts.teardown();
      throw err;
    }
  }

  /**
   * Starts (or starts again) the node of `host`, id `node-<host>`, with `env` added to its environment
   * (TIDEPOOL_LOG=trace, say); resolves once it is ready.
   */
  async startNode(host: TestHost, env?: Record<string, string>): Promise<HostNode> {
    const proxy = this.nodeProxies.get(host)?.address;
    const node = await host.startNode({
      zk: this.zkAddress, secretFile: this.secretFile, workers: this.opts.workers ?? 1, id: `node-${host.name}`,
      extraArgs: ['--listen', `${host.address}:${NODE_PORT}`, ...(proxy ? ['--advertise', proxy] : []), ...(this.opts.nodeArgs ?? [])],
      timeoutMs: 120_000, ...(env ? { env } : {}),
    });
    this.nodes.set(host, node);
    void node.process.exited.then((code) => {
      if (this.nodes.get(host) === node) this.nodes.delete(host);
      const said = node.process.stderr().trim().split('\n').filter((l) => !/ TRACE /.test(l)).slice(-20).join('\n    ');
      this.nodeEnds.push(`${new Date().toISOString()} ${node.id} on ${host.name} exited ${code}${said ? `:\n    ${said}` : ''}`);
    });
    return node;
  }

  /** The node of `host`, running (fails naming the host otherwise). */
  node(host: TestHost): HostNode {
    const node = this.nodes.get(host);
    if (!node) throw new Error(`no node is running on ${host.name}`);
    return node;
  }

  /** Sets the latency of every link (`nodesOnly`: of the links to the nodes' ports only); needs a cluster started with `latency`. */
  setLatency(opts: LatencyOptions, nodesOnly = false): void {
    if (this.nodeProxies.size === 0) throw new Error('the cluster has no latency proxies: start it with latency (0 ms will do)');
    for (const p of [...this.nodeProxies.values(), ...(nodesOnly ? [] : this.zkProxies)]) p.set(opts);
  }

  /** Every host drops `percent` % of the packets it receives (0: none). */
  async setLoss(percent: number): Promise<void> {
    await Promise.all(this.hosts.hosts.map((h) => this.hosts.dropShare(h, percent)));
  }

  async startNodes(): Promise<void> {
    await Promise.all(this.nodeHosts.map((h) => this.startNode(h)));
  }

  /**
   * The test's own view of the cluster: a session from the test process, straight to the servers
   * over the bridge (no latency: it watches, it is not part of the run).
   */
  observe(): Promise<Cluster> {
    return Cluster.connect(this.zk.connectionString, { secret: this.secret() });
  }

  secret(): string {
    return readFileSync(this.secretFile, 'utf8').trim();
  }

  /** Runs `tidepool args` on the client host with this cluster's address and secret, to its end. */
  run(args: readonly string[], timeoutMs = 240_000): Promise<RunResult> {
    return this.client.runTidepool([...args, '--zk', this.zkAddress], { env: { TIDEPOOL_SECRET_FILE: this.secretFile }, timeoutMs });
  }

  /** Runs `tidepool args` on the client host and returns its last line as JSON (fails with its output otherwise). */
  async runJson<T>(args: readonly string[], timeoutMs?: number): Promise<T> {
    const r = await this.run([...args, '--json'], timeoutMs);
    if (r.code !== 0) throw new Error(`tidepool ${args.join(' ')} on the client host exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as T;
  }

  teardown(): Promise<void> {
    return this.hosts.teardown();
  }
}
