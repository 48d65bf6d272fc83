/**
 * The opt-in HTTP endpoint of a node (or a service process) for monitoring:
 * - `GET /metrics`: the registry in Prometheus text format;
 * - `GET /healthz`: 200 while the process is alive and its coordination session is usable, else 503;
 * - `GET /readyz`: 200 once the node has joined the cluster and takes work; 503 before, while it
 *   drains or stops, and while its coordination session is disconnected — with the reason.
 * Three read-only paths on `node:http`: no bodies are read (a request with one is refused), so the
 * dashboard's HTTP framework is not needed here (and the runtime does not import the dashboard).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from './metrics-registry.js';

/** A probe's answer: undefined when all is well, else why not. */
export type Probe = () => string | undefined;

/** Where `startMetricsServer` listens, what it serves, and its probes. */
export interface MetricsServerOptions {
  port: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  registry: MetricsRegistry;
  health: Probe;
  readiness: Probe;
}

/** A running metrics endpoint (`startMetricsServer`). */
export interface MetricsServer {
  /** `http://host:port` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a registry's `/metrics` (Prometheus text) with `/healthz` and `/readyz` probes on a port of its own. */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => void answer(req, res, opts));
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`metrics port ${host}:${opts.port}: ${err.code ?? err.message}`)));
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, opts: MetricsServerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  const send = (status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const known = path === '/metrics' || path === '/healthz' || path === '/readyz';
  if (!known) return send(404, 'application/json', '{"error":"not found: /metrics, /healthz and /readyz are served here"}');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(405, 'application/json', `{"error":"${req.method} is not allowed here"}`);
  }
  if (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined) {
    return send(413, 'application/json', '{"error":"these paths take no request body"}');
  }
  try {
    if (path === '/metrics') return send(200, opts.registry.contentType, await opts.registry.text());
    const reason = (path === '/healthz' ? opts.health : opts.readiness)();
    const field = path === '/healthz' ? 'ok' : 'ready';
    send(reason === undefined ? 200 : 503, 'application/json', JSON.stringify(reason === undefined ? { [field]: true } : { [field]: false, reason }));
  } catch (err) {
    send(500, 'application/json', JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
  }
}
