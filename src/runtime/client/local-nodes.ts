/**
 * The embedded cluster's launcher: nodes started in this process, each with its own session on the
 * embedded coordination backend and a transport on the in-process network. `Cluster.embedded()`
 * owns one; tests and the elastic runner start, crash and stop its nodes.
 */
import { connect, embeddedServer } from '../../coord/connect.js';
import type { CoordClient } from '../../coord/types.js';
import { InProcessNetwork, InProcessTransport } from '../../transport/in-process-transport.js';
import { usableCores } from '../../util/capacity.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { Emitter } from '../../util/emitter.js';
import type { Logger } from '../../util/log.js';
import type { NodeEvent } from '../node/node-events.js';
import { newNodeId, TidepoolNode } from '../node/node.js';

export interface LocalNodeOptions {
  /** Worker threads per node (default: cores / `nodes`, at least 1). */
  workers?: number;
  /** The node count the default worker count is divided by (default 1). */
  nodes?: number;
  /** Settings for job kinds, by kind name (NodeOptions.kindOptions). */
  kindOptions?: Record<string, unknown>;
  /** Seed of the nodes' random choices (plus the number of local nodes running when one starts). */
  seed?: number;
  /** How often each node reports progress events (ms; default 1000, 0 = never). */
  progressIntervalMs?: number;
  /** Each node serves `/metrics`, `/healthz` and `/readyz` on a free port of `host` (see `TidepoolNode.metricsUrl`). */
  metrics?: { host?: string; processMetrics?: boolean };
  /** Where the nodes' log records go (with `node`, `job`, `task` fields); default: the process's (see `setLogger`). */
  logger?: Logger;
  /** The cluster secret the nodes hold (their coordination sessions, code admission). */
  secret: ClusterSecret;
  /** Locations of code the nodes run beyond the built-ins and tidepool's installation (NodeOptions.allowCode). */
  allowCode?: readonly string[];
}

export class LocalNodes {
  private readonly running = new Map<string, { node: TidepoolNode; client: CoordClient }>();
  readonly network: InProcessNetwork;

  /**
   * The file modules the cluster's own client submitted, admitted by these nodes (they share the submitting
   * program, which could import them itself). Code admission refuses other files outside tidepool's installation.
   */
  readonly submittedHere = new Set<string>();

  /** Every local node's events. */
  readonly events = new Emitter<{ event: NodeEvent }>();

  /** `backend`: the embedded coordination backend's name. */
  constructor(readonly backend: string, private readonly opts: LocalNodeOptions) {
    this.network = InProcessNetwork.get(backend);
  }

  /** Starts `count` more nodes; resolves with their ids. */
  async add(count: number): Promise<string[]> {
    const workers = this.opts.workers ?? Math.max(1, Math.floor(usableCores() / Math.max(1, this.opts.nodes ?? 1)));
    return Promise.all(Array.from({ length: count }, async () => {
      const client = await connect(`embedded:${this.backend}`, { secret: this.opts.secret });
      const id = newNodeId();
      const node = await TidepoolNode.start({
        client, transport: new InProcessTransport(id, this.network), workers, nodeId: id, holdsProcess: false, secret: this.opts.secret, submittedHere: this.submittedHere,
        ...(this.opts.allowCode ? { allowCode: this.opts.allowCode } : {}),
        ...(this.opts.kindOptions ? { kindOptions: this.opts.kindOptions } : {}),
        ...(this.opts.seed !== undefined ? { seed: this.opts.seed + this.running.size } : {}),
        ...(this.opts.progressIntervalMs !== undefined ? { progressIntervalMs: this.opts.progressIntervalMs } : {}),
        ...(this.opts.metrics ? { metrics: { ...this.opts.metrics, port: 0 } } : {}),
        ...(this.opts.logger ? { logger: this.opts.logger } : {}),
      });
      node.on((e) => this.events.emit('event', e));
      this.running.set(node.id, { node, client });
      return node.id;
    }));
  }

  list(): TidepoolNode[] {
    return [...this.running.values()].map((r) => r.node);
  }

  /** Kills a node as kill -9 would: no drain; its session expires, so the cluster sees it vanish. */
  async crash(nodeId: string): Promise<void> {
    const entry = this.take(nodeId);
    await entry.node.crash();
    embeddedServer(this.backend).expire(entry.client.sessionId);
  }

  /** Stops a node gracefully (drain, then leave). */
  async stop(nodeId: string): Promise<void> {
    const entry = this.take(nodeId);
    await entry.node.shutdown();
    await entry.client.close();
  }

  /** Stops every node: tasks checkpoint, nothing is handed between nodes that are all stopping. */
  async close(): Promise<void> {
    await Promise.all([...this.running.values()].map(async ({ node, client }) => {
      await node.shutdown({ handOver: false });
      await client.close();
    }));
    this.running.clear();
  }

  private take(nodeId: string): { node: TidepoolNode; client: CoordClient } {
    const entry = this.running.get(nodeId);
    if (!entry) throw new Error(`no local node ${nodeId}`);
    this.running.delete(nodeId);
    return entry;
  }
}
