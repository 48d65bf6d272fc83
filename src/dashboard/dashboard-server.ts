import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { MetricsRegistry } from '../runtime/metrics/metrics-registry.js';
import type { ClusterMonitor } from './cluster-monitor.js';
import { loadDashboardAssets } from './dashboard-assets.js';
import { clusterMetrics } from './metrics.js';
import { fastify } from './dashboard-dependencies.js';

export interface DashboardOptions {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  /** Most event streams served at once (further pages get 503). */
  maxStreams?: number;
  /** Serve /metrics (default true). */
  metrics?: boolean;
}

export interface DashboardServer {
  /** e.g. http://127.0.0.1:7070/ */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The live dashboard and the Prometheus endpoint, on one HTTP server:
 * `/` the page, `/assets/*` its files, `/api/snapshot` the current state, `/api/events` the
 * same pushed as server-sent events once per monitor tick, `/metrics`, and the probes `/healthz` (the
 * process serves) and `/readyz` (the monitor's latest read of the cluster succeeded), as a node's
 * endpoint answers them.
 */
export async function startDashboard(monitor: ClusterMonitor, opts: DashboardOptions = {}): Promise<DashboardServer> {
  const assets = loadDashboardAssets();
  const registry = opts.metrics === false ? undefined : clusterMetrics(monitor);
  const streams = new Set<ServerResponse>();
  const app = fastify()({ logger: false, bodyLimit: 1024, return503OnClosing: true });
  routes(app, monitor, assets, registry, streams, opts.maxStreams ?? 64);
  const off = monitor.on((snapshot) => {
    const frame = sseFrame('snapshot', snapshot);
    for (const res of streams) res.write(frame);
  });
  const heartbeat = setInterval(() => {
    for (const res of streams) res.write(': keep-alive\n\n');
  }, 15_000);
  heartbeat.unref();
  await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port ?? 0;
  const host = opts.host === undefined || opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    close: async () => {
      off();
      clearInterval(heartbeat);
      for (const res of streams) res.end();
      streams.clear();
      await app.close();
    },
  };
}

function routes(app: FastifyInstance, monitor: ClusterMonitor, assets: ReturnType<typeof loadDashboardAssets>, registry: MetricsRegistry | undefined, streams: Set<ServerResponse>, maxStreams: number): void {
  for (const [path, asset] of assets) {
    app.get(path, (_req, reply) => reply.header('content-type', asset.type).header('cache-control', 'no-cache').send(asset.body));
  }
  app.get('/healthz', () => ({ ok: true }));
  app.get('/readyz', (_req, reply) => {
    const reason = monitor.readiness();
    return reason === undefined ? { ready: true } : reply.code(503).send({ ready: false, reason });
  });
  app.get('/api/snapshot', () => monitor.hello());
  app.get('/api/events', (req, reply) => {
    if (streams.size >= maxStreams) return reply.code(503).send({ error: `too many open dashboards (${maxStreams})` });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(`retry: 2000\n\n${sseFrame('hello', monitor.hello())}`);
    streams.add(res);
    req.raw.on('close', () => streams.delete(res));
  });
  if (registry) {
    app.get('/metrics', async (_req, reply) => reply.header('content-type', registry.contentType).send(await registry.text()));
  }
}

function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
