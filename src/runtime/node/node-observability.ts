/**
 * What a node shows to monitoring: its phase (starting, ready, draining, stopped), and, when asked
 * for with `NodeOptions.metrics`, a metrics registry (the node's figures and its kinds' histograms)
 * served with health and readiness probes on a port of its own.
 */
import type { SessionState } from '../../coord/types.js';
import { NO_METRICS, MetricsRegistry, type Metrics } from '../metrics/metrics-registry.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import { NodeMetrics, type JobEnd, type NodeReading } from './node-metrics.js';

/** A node's metrics endpoint (`NodeOptions.metrics`): its port and address, and prom-client's process figures. */
export interface NodeMetricsOptions {
  /** Port of `/metrics`, `/healthz` and `/readyz` (0 = any free port). */
  port: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** prom-client's process figures (CPU, memory, event loop; default true). */
  processMetrics?: boolean;
  /** Called with the endpoint's URL once it listens, before the node has joined the cluster. */
  onListening?(url: string): void;
}

export type NodePhase = 'starting' | 'ready' | 'draining' | 'stopped';

export class NodeObservability {
  phase: NodePhase = 'starting';
  /** The node's registry (with `NodeOptions.metrics`). */
  readonly registry: MetricsRegistry | undefined;
  private readonly figures: NodeMetrics | undefined;
  private server: MetricsServer | undefined;

  constructor(nodeId: string, private readonly opts: NodeMetricsOptions | undefined, read: () => NodeReading, private readonly session: () => SessionState) {
    if (!opts) return;
    this.registry = new MetricsRegistry({ processMetrics: opts.processMetrics ?? true, prefix: 'tidepool_node_' });
    this.figures = new NodeMetrics(this.registry.prometheus, nodeId, read, () => this.readiness() === undefined);
  }

  /** Starts serving (first thing a node does: the probes answer while it joins). */
  async listen(): Promise<void> {
    if (!this.opts || !this.registry) return;
    this.server = await startMetricsServer({
      port: this.opts.port, registry: this.registry, health: () => this.health(), readiness: () => this.readiness(),
      ...(this.opts.host !== undefined ? { host: this.opts.host } : {}),
    });
    this.opts.onListening?.(this.server.url);
  }

  get url(): string | undefined {
    return this.server?.url;
  }

  /** The view of one job kind (its histograms carry its name), or nothing without metrics. */
  forKind(kind: string): Metrics {
    return this.registry ? this.registry.forKind(kind) : NO_METRICS;
  }

  jobLeft(final: NodeReading, end: JobEnd): void {
    this.figures?.jobLeft(final, end);
  }

  /** Undefined while the process serves; else why not. */
  health(): string | undefined {
    if (this.phase === 'stopped') return 'the node has stopped';
    const s = this.session();
    return s === 'expired' || s === 'closed' ? `the coordination session is ${s}` : undefined;
  }

  /** Undefined once the node has joined the cluster and takes work; else why not. */
  readiness(): string | undefined {
    switch (this.phase) {
      case 'starting': return 'the node has not joined the cluster yet';
      case 'draining': return 'the node is draining';
      case 'stopped': return 'the node has stopped';
      case 'ready': {
        const s = this.session();
        return s === 'connected' ? undefined : `the coordination session is ${s}`;
      }
    }
  }

  async close(): Promise<void> {
    this.phase = 'stopped';
    await this.server?.close();
    this.server = undefined;
  }
}
