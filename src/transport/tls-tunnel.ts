/**
 * A local TLS tunnel for clients that speak plaintext TCP only: it listens on a loopback port and
 * forwards each connection over TLS to one of its targets. Made for ZooKeeper's `secureClientPort`
 * (node-zookeeper-client has no TLS; docs/security.md, "ZooKeeper over TLS"): tidepool connects to
 * `zk://127.0.0.1:<port>` and the bytes leave the machine encrypted, the server's certificate checked.
 *
 * - The server is verified: its chain against `ca` (or the system's roots), its name or IP address
 *   against the target's host (or `servername`). A target that fails is logged with the reason and the
 *   next one is tried; a client whose connection no target takes is disconnected (ZooKeeper's client
 *   then reconnects, and the tunnel tries again).
 * - The client certificate (`cert`/`key` or a PKCS#12 `pfx`) is presented when the server asks for one
 *   (ZooKeeper's `ssl.clientAuth=need`).
 * - The plaintext side listens on loopback only: anything else would hand the server's access to
 *   whoever reaches that address, unencrypted.
 * - At most `maxConnections` connections at once (more are refused), and a target must finish its TLS
 *   handshake within `connectTimeoutMs`; bytes wait in each socket's own buffers, with back-pressure
 *   (pipe), so nothing grows without bound.
 */
import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { Emitter } from '../util/emitter.js';
import { log } from '../util/log.js';
import { TransportError } from './types.js';

export interface TunnelTarget {
  host: string;
  port: number;
}

export interface TlsTunnelOptions {
  /** The servers, tried in turn (a new connection starts with the next one). */
  targets: readonly TunnelTarget[];
  /** Loopback address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port to listen on (default 0: an ephemeral port, see `address` after start()). */
  port?: number;
  /** Certificate authorities (PEM) that vouch for the servers (default: the system's roots). */
  ca?: string | Buffer;
  /** Client certificate and key (PEM), for servers that require one. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Client certificate and key as PKCS#12, with its passphrase (instead of cert and key). */
  pfx?: Buffer;
  passphrase?: string;
  /** The name the servers' certificates must carry (default: each target's host). */
  servername?: string;
  /** A target must connect and finish its TLS handshake within this long (default 10 s). */
  connectTimeoutMs?: number;
  /** Connections at once; more are refused (default 256). */
  maxConnections?: number;
}

export interface TlsTunnelEvents extends Record<string, unknown> {
  /** A client's connection reached a target over TLS. */
  forwarded: { target: string; protocol: string };
  /** A target could not be used for a connection (the reason as logged). */
  targetFailed: { target: string; reason: string };
  /** A client was disconnected because no target could be reached, or too many were connected. */
  refused: { reason: string };
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_CONNECTIONS = 256;

/** Parses "host:port" (IPv6 hosts in brackets: "[::1]:2281"); port 0 only with `anyPort` (an address to listen on). */
export function parseTunnelTarget(text: string, anyPort = false): TunnelTarget {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:/[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < (anyPort ? 0 : 1) || port > 65_535) throw new TransportError(`bad address ${JSON.stringify(text)}: expected host:port`);
  return { host: match[1] ?? match[2]!, port };
}

function formatTarget(t: TunnelTarget): string {
  return t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
}

/** How many PEM certificates `pem` holds (each must parse). */
function certificatesIn(pem: string | Buffer): number {
  const blocks = pem.toString().match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new TransportError(`a CA certificate does not parse: ${(err as Error).message}`);
    }
  }
  return blocks.length;
}

/** Whether `host` is a loopback address (127.0.0.0/8, ::1) or "localhost". */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return net.isIPv6(host) && (host === '::1' || /^::ffff:127\./i.test(host));
}

export class TlsTunnel {
  readonly events = new Emitter<TlsTunnelEvents>();
  private readonly targets: readonly TunnelTarget[];
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly secureContext: tls.SecureContext;
  private readonly connectTimeoutMs: number;
  private readonly maxConnections: number;
  /** Clients' connections (what the limit counts), and every socket the tunnel holds (what close destroys). */
  private readonly clients = new Set<net.Socket>();
  private readonly sockets = new Set<net.Socket>();
  private server: net.Server | undefined;
  private boundPort: number | undefined;
  private nextTarget = 0;
  private closed = false;

  constructor(private readonly options: TlsTunnelOptions) {
    if (options.targets.length === 0) throw new TransportError('the tunnel needs at least one target (host:port)');
    this.targets = options.targets;
    this.host = options.host ?? '127.0.0.1';
    if (!isLoopback(this.host)) {
      throw new TransportError(`the tunnel listens on loopback only (127.0.0.1, ::1): ${this.host} would let anyone who reaches it use the server without TLS`);
    }
    this.requestedPort = options.port ?? 0;
    if ((options.cert === undefined) !== (options.key === undefined)) throw new TransportError('a client certificate needs its key, and a key its certificate');
    if (options.pfx !== undefined && options.cert !== undefined) throw new TransportError('give the client certificate either as PEM (cert and key) or as PKCS#12 (pfx), not both');
    // Node ignores CA text it cannot parse: the tunnel would then trust no one, and say only "unable to verify".
    if (options.ca !== undefined && certificatesIn(options.ca) === 0) throw new TransportError('the CAs to trust hold no PEM certificate');
    try {
      this.secureContext = tls.createSecureContext({
        minVersion: 'TLSv1.2',
        ...(options.ca !== undefined ? { ca: options.ca } : {}),
        ...(options.cert !== undefined ? { cert: options.cert, key: options.key } : {}),
        ...(options.pfx !== undefined ? { pfx: options.pfx, passphrase: options.passphrase } : {}),
      });
    } catch (err) {
      throw new TransportError(`the tunnel's certificates are unusable: ${(err as Error).message}`);
    }
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  }

  /** "host:port" the tunnel listens on, once started. */
  get address(): string {
    if (this.boundPort === undefined) throw new TransportError('the tunnel has no address before start()');
    return formatTarget({ host: this.host, port: this.boundPort });
  }

  get port(): number {
    if (this.boundPort === undefined) throw new TransportError('the tunnel has no address before start()');
    return this.boundPort;
  }

  /** Clients connected now. */
  get connections(): number {
    return this.clients.size;
  }

  async start(): Promise<void> {
    if (this.server) throw new TransportError('the tunnel was already started');
    // Half-open both ways: a side that has finished sending may still receive (its end() travels as TLS's close_notify).
    const server = net.createServer({ pauseOnConnect: true, noDelay: true, allowHalfOpen: true }, (socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new TransportError(`the tunnel cannot listen on ${formatTarget({ host: this.host, port: this.requestedPort })}: ${err.message}`)));
      server.listen(this.requestedPort, this.host, () => resolve());
    });
    server.on('error', (err) => log.warn('tunnel', 'listener error', err));
    this.boundPort = (server.address() as net.AddressInfo).port;
    log.info('tunnel', `listening on ${this.address}; TLS to ${this.targets.map(formatTarget).join(', ')}`);
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    if (server?.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    if (this.closed) return void client.destroy();
    if (this.clients.size >= this.maxConnections) {
      this.refuse(client, `${this.maxConnections} connections already (the most at once)`);
      return;
    }
    this.clients.add(client);
    this.sockets.add(client);
    client.once('close', () => {
      this.clients.delete(client);
      this.sockets.delete(client);
    });
    client.on('error', (err) => log.debug('tunnel', `client ${client.remoteAddress}:${client.remotePort}: ${err.message}`));
    const first = this.nextTarget++ % this.targets.length;
    this.tryTarget(client, first, 0, []);
  }

  /** Connects `client` through target (first + attempt), or the next one when it fails. */
  private tryTarget(client: net.Socket, first: number, attempt: number, reasons: string[]): void {
    if (client.destroyed || this.closed) return;
    if (attempt === this.targets.length) {
      this.refuse(client, `no target could be reached: ${reasons.join('; ')}`);
      return;
    }
    const target = this.targets[(first + attempt) % this.targets.length]!;
    const name = formatTarget(target);
    const servername = this.options.servername ?? (net.isIP(target.host) ? undefined : target.host);
    const server = tls.connect({
      host: target.host,
      port: target.port,
      secureContext: this.secureContext,
      allowHalfOpen: true,
      ...(servername !== undefined ? { servername } : {}),
      // The default check (chain and name) stays on; only the name it checks may be the operator's.
      ...(this.options.servername !== undefined ? { checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(this.options.servername!, cert) } : {}),
    } as tls.ConnectionOptions); // allowHalfOpen: not in @types/node 20's ConnectionOptions, but tls.connect passes it to the socket
    server.setNoDelay(true);
    let settled = false;
    const timer = setTimeout(() => fail(`no TLS connection within ${this.connectTimeoutMs} ms`), this.connectTimeoutMs);
    timer.unref();
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      server.destroy();
      log.warn('tunnel', `target ${name}: ${reason}`);
      this.events.emit('targetFailed', { target: name, reason });
      this.tryTarget(client, first, attempt + 1, [...reasons, `${name}: ${reason}`]);
    };
    server.once('error', (err) => fail(err.message));
    server.once('close', () => fail('closed during the TLS handshake'));
    server.once('secureConnect', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      server.removeAllListeners('close');
      server.removeAllListeners('error');
      this.join(client, server, name);
    });
  }

  /** Pipes the two sockets both ways (with back-pressure); either ending or failing ends the other. */
  private join(client: net.Socket, server: tls.TLSSocket, name: string): void {
    if (client.destroyed || this.closed) return void server.destroy();
    const protocol = server.getProtocol() ?? 'TLS';
    log.debug('tunnel', `${client.remoteAddress}:${client.remotePort} → ${name} (${protocol})`);
    this.events.emit('forwarded', { target: name, protocol });
    this.sockets.add(server);
    server.once('close', () => {
      this.sockets.delete(server);
      client.destroy();
    });
    client.once('close', () => server.destroy());
    server.on('error', (err) => log.info('tunnel', `connection to ${name} ended: ${err.message}`));
    client.pipe(server);
    server.pipe(client);
    client.resume();
  }

  private refuse(client: net.Socket, reason: string): void {
    log.warn('tunnel', `refused a connection from ${client.remoteAddress}:${client.remotePort}: ${reason}`);
    this.events.emit('refused', { reason });
    client.destroy();
  }
}
