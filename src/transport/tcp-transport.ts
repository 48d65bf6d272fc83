/**
 * Transport over TCP: length-prefixed msgpack frames inside mutual TLS 1.3 (the node channel). Each
 * node listens on one port and opens one outbound connection per peer, lazily on the first send, and
 * reuses it; a connection that fails is forgotten and the next send opens a new one. Both ends present
 * certificates that name their node ids and chain to a CA the other trusts (channel-credentials.ts):
 * by default the CA every holder of the cluster secret derives from it (cluster-ca.ts), or the
 * operator's PKI. Messages from a peer are delivered with the node id its certificate names; a sender
 * checks that the peer it reached is the node it meant. See tcp-connection.ts for the connections.
 *
 * `send` encodes the message at once (mutating it afterwards does not change what is sent, except
 * bytes the sender lent: see attachment.ts) and resolves when the frame has been written to the
 * connection. A send to a peer that cannot be connected to and admitted within `connectTimeoutMs`
 * rejects with TransportError; a refused connection rejects at once (no retries: the caller decides).
 *
 * `setCredentials` replaces the credentials while running (a secret rotation): new connections use the
 * new ones, every outbound connection is retired (its queued frames still go, in order, before the
 * next connection to that peer opens), and every inbound connection whose peer is no longer trusted
 * is dropped.
 */
import type net from 'node:net';
import tls from 'node:tls';
import { Emitter } from '../util/emitter.js';
import { log } from '../util/log.js';
import { type ChannelCredentials, channelCredentials, type ChannelSource, stillTrusted } from './channel-credentials.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrameParts } from './frame-codec.js';
import {
  DEFAULT_CONNECT_TIMEOUT_MS, describeSocketError, formatTcpAddress, InboundConnection, isTlsError, OutboundConnection, parseTcpAddress,
} from './tcp-connection.js';
import type { AttachmentPlacer, Message, MessageHandler, PeerAddress, Transport } from './types.js';
import { TransportError } from './types.js';

export interface TcpTransportOptions {
  nodeId: string;
  /**
   * The cluster secret (a string is taken as UTF-8), or during a rotation several: the first is the
   * one this node presents, every one is trusted. Not used for the channel when `tls` is given.
   */
  secret?: Buffer | string | ReadonlyArray<Buffer | string>;
  /** The operator's PKI instead (PEM): this node's certificate (naming urn:tidepool:node:<nodeId>) and key, and the CAs to trust. */
  tls?: { cert: string; key: string; ca: string };
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Port to listen on (default 0: an ephemeral port, see `address` after start()). */
  port?: number;
  /**
   * What peers are told to dial when it is not the address listened on: a wildcard listener, a proxy
   * or NAT in between. "tcp://host:port", or a host with an optional port (default: the port listened on).
   */
  advertise?: string | { host: string; port?: number };
  /** Largest message payload sent or accepted, in bytes (default 64 MiB). */
  maxFrameBytes?: number;
  /** Connect to a peer and be admitted within this long, or fail the sends (default 5 s). */
  connectTimeoutMs?: number;
  /** Drop an incoming connection that has not finished its TLS handshake within this long (default 5 s). */
  handshakeTimeoutMs?: number;
}

export interface TcpTransportEvents extends Record<string, unknown> {
  /** An incoming connection was admitted (its peer's certificate is trusted and names `peer`). */
  accepted: { remote: string; peer: string };
  /** An incoming connection was refused or dropped: untrusted peer, failed TLS, protocol violation, timeout. */
  rejected: { remote: string; reason: string };
}

/** The channel source of transport options: the operator's PKI when given, else the secret(s). */
export function channelSourceOf(options: Pick<TcpTransportOptions, 'secret' | 'tls'>): ChannelSource {
  if (options.tls) return options.tls;
  if (options.secret === undefined) throw new TypeError('the node channel needs the cluster secret (or the operator\'s certificates: tls)');
  return { secrets: Array.isArray(options.secret) ? options.secret : [options.secret as Buffer | string] };
}

export class TcpTransport implements Transport {
  readonly nodeId: string;
  /** Observability (and test) hooks: accepted and rejected incoming connections. */
  readonly events = new Emitter<TcpTransportEvents>();
  private credentials: ChannelCredentials;
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly advertised: { host: string; port?: number } | undefined;
  private readonly maxFrameBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly handshakeTimeoutMs: number;
  private readonly handlers = new Set<MessageHandler>();
  private readonly placers = new Set<AttachmentPlacer>();
  private readonly outbound = new Map<string, OutboundConnection>();
  /** Connections retired by setCredentials and not yet closed, by peer: the next one waits for them. */
  private readonly retiring = new Map<string, OutboundConnection>();
  private readonly inbound = new Set<InboundConnection>();
  private server: tls.Server | undefined;
  private boundAddress: string | undefined;
  private state: 'new' | 'starting' | 'started' | 'closed' = 'new';
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: TcpTransportOptions) {
    if (typeof options.nodeId !== 'string' || options.nodeId.length === 0) throw new TypeError('node id must be a non-empty string');
    this.nodeId = options.nodeId;
    this.credentials = channelCredentials(options.nodeId, channelSourceOf(options));
    this.host = options.host ?? '127.0.0.1';
    this.requestedPort = options.port ?? 0;
    this.advertised = typeof options.advertise === 'string' ? parseTcpAddress(options.advertise) : options.advertise;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }

  /** "tcp://host:port" peers dial (the advertised address, if any), once started. */
  get address(): string {
    if (this.boundAddress === undefined) throw new TransportError(`transport ${this.nodeId} has no address before start()`, this.nodeId);
    if (!this.advertised) return this.boundAddress;
    return formatTcpAddress(this.advertised.host, this.advertised.port ?? this.port);
  }

  /** The port listened on, once started. */
  get port(): number {
    if (this.boundAddress === undefined) throw new TransportError(`transport ${this.nodeId} has no address before start()`, this.nodeId);
    return parseTcpAddress(this.boundAddress).port;
  }

  /** What this node presents and trusts, for logs (names of CAs; never a secret). */
  get channelSummary(): string {
    return this.credentials.summary;
  }

  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new TransportError(`transport ${this.nodeId} was already ${this.state}`, this.nodeId));
    this.state = 'starting';
    this.starting = this.listen();
    return this.starting;
  }

  private async listen(): Promise<void> {
    const server = tls.createServer({
      ...this.credentials.tlsOptions,
      requestCert: true,
      // Peers are judged in InboundConnection (checkPeer), where the reason is logged and told.
      rejectUnauthorized: false,
      handshakeTimeout: this.handshakeTimeoutMs,
      noDelay: true,
    }, (socket) => this.accept(socket));
    server.on('tlsClientError', (err, socket) => this.refuseHandshake(err, socket));
    this.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.requestedPort, this.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      this.state = 'closed';
      throw new TransportError(`transport ${this.nodeId} cannot listen on ${this.host}:${this.requestedPort}: ${(err as Error).message}`, this.nodeId);
    }
    server.on('error', (err) => log.warn('transport', `${this.nodeId}: listener error`, err));
    const bound = server.address() as net.AddressInfo;
    this.boundAddress = formatTcpAddress(this.host, bound.port);
    if (this.state !== 'starting') return; // close() was called meanwhile and closes the listener
    this.state = 'started';
    log.info('transport', `${this.nodeId}: listening on ${this.boundAddress} (TLS 1.3; ${this.credentials.summary})`);
  }

  send(to: PeerAddress, message: Message): Promise<void> {
    if (this.state !== 'started') {
      return Promise.reject(new TransportError(`transport ${this.nodeId} is ${this.state === 'closed' ? 'closed' : 'not started'}`, to.nodeId));
    }
    let frame: Buffer[];
    try {
      parseTcpAddress(to.address);
      frame = encodeFrameParts(message, this.maxFrameBytes);
    } catch (err) {
      return Promise.reject(new TransportError(`cannot send ${JSON.stringify(message?.type)} to ${to.nodeId}: ${(err as Error).message}`, to.nodeId));
    }
    return this.connectionTo(to).send(frame);
  }

  onMessage(handler: MessageHandler): () => void {
    const entry: MessageHandler = (from, message) => handler(from, message);
    this.handlers.add(entry);
    return () => this.handlers.delete(entry);
  }

  placeAttachments(placer: AttachmentPlacer): () => void {
    const entry: AttachmentPlacer = (...args) => placer(...args);
    this.placers.add(entry);
    return () => this.placers.delete(entry);
  }

  /**
   * Replaces the channel credentials (e.g. a secret rotation); throws TransportError, changing nothing,
   * when the new ones are unusable.
   */
  setCredentials(source: ChannelSource): void {
    if (this.state === 'closed') throw new TransportError(`transport ${this.nodeId} is closed`, this.nodeId);
    const next = channelCredentials(this.nodeId, source);
    this.credentials = next;
    this.server?.setSecureContext({ ...next.tlsOptions });
    for (const [peer, connection] of this.outbound) {
      this.outbound.delete(peer);
      this.retire(peer, connection);
    }
    for (const connection of this.inbound) {
      if (connection.peerNodeId !== undefined && !stillTrusted(connection.chain, next)) {
        void connection.drop('its certificate is no longer trusted (the channel credentials changed)');
      }
    }
    log.info('transport', `${this.nodeId}: channel credentials replaced (${next.summary})`);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closed';
    await this.starting?.catch(() => undefined);
    const server = this.server;
    const listenerClosed = server?.listening
      ? new Promise<void>((resolve) => server.close(() => resolve()))
      : Promise.resolve();
    await Promise.all([
      listenerClosed,
      ...[...this.outbound.values(), ...this.retiring.values()].map((c) => c.close()),
      ...[...this.inbound].map((c) => c.close()),
    ]);
    this.outbound.clear();
    this.retiring.clear();
    this.inbound.clear();
    log.info('transport', `${this.nodeId}: closed`);
  }

  private retire(peer: string, connection: OutboundConnection): void {
    this.retiring.set(peer, connection);
    connection.retire();
    void connection.closed.then(() => {
      if (this.retiring.get(peer) === connection) this.retiring.delete(peer);
    });
  }

  /** The live connection to this peer, or a new one (replacing one to an old address). */
  private connectionTo(to: PeerAddress): OutboundConnection {
    const existing = this.outbound.get(to.nodeId);
    if (existing && !existing.isClosed) {
      if (existing.peer.address === to.address) return existing;
      void existing.close(`peer moved to ${to.address}`);
    }
    const previous = this.retiring.get(to.nodeId);
    const connection = new OutboundConnection({
      peer: { nodeId: to.nodeId, address: to.address },
      credentials: this.credentials,
      maxFrameBytes: this.maxFrameBytes,
      connectTimeoutMs: this.connectTimeoutMs,
      ...(previous ? { after: previous.closed } : {}),
      onClosed: (c) => {
        if (this.outbound.get(c.peer.nodeId) === c) this.outbound.delete(c.peer.nodeId);
      },
    });
    this.outbound.set(to.nodeId, connection);
    return connection;
  }

  private accept(socket: tls.TLSSocket): void {
    if (this.state === 'closed') {
      socket.destroy();
      return;
    }
    const connection = new InboundConnection(socket, {
      credentials: this.credentials,
      maxFrameBytes: this.maxFrameBytes,
      deliver: (from, message) => this.deliver(from, message),
      placer: (from, header, field, frame) => this.place(from, header, field, frame),
      onAdmitted: (remote, peer) => this.events.emit('accepted', { remote, peer }),
      onRejected: (remote, reason) => this.events.emit('rejected', { remote, reason }),
      onClosed: (c) => this.inbound.delete(c),
    });
    if (connection.peerNodeId !== undefined) this.inbound.add(connection);
  }

  /** A connection that failed before or during its TLS handshake: logged and reported like any refusal. */
  private refuseHandshake(err: Error, socket: tls.TLSSocket): void {
    const host = socket.remoteAddress ?? 'unknown';
    const remote = `${host.includes(':') ? `[${host}]` : host}:${socket.remotePort ?? '?'}`;
    const timedOut = (err as NodeJS.ErrnoException).code === 'ERR_TLS_HANDSHAKE_TIMEOUT';
    if (!timedOut && !isTlsError(err)) {
      // The client went away during the handshake (a peer that gave up, a port scan): nothing to warn about.
      log.debug('transport', `${this.nodeId}: connection from ${remote} closed during the TLS handshake: ${err.message}`);
      socket.destroy();
      return;
    }
    const reason = timedOut ? `no TLS handshake within ${this.handshakeTimeoutMs} ms` : `TLS handshake failed: ${describeSocketError(err)}`;
    log.warn('transport', `${this.nodeId}: dropping connection from ${remote}: ${reason}`);
    this.events.emit('rejected', { remote, reason });
    socket.destroy();
  }

  /** The first placer's destination for an incoming attachment (a placer that throws is logged and skipped). */
  private place(...args: Parameters<AttachmentPlacer>): Buffer | undefined {
    for (const placer of this.placers) {
      try {
        const target = placer(...args);
        if (target) return target;
      } catch (err) {
        log.warn('transport', `attachment placer of ${this.nodeId} threw on ${JSON.stringify(args[1].type)} from ${args[0]}`, err);
      }
    }
    return undefined;
  }

  private deliver(from: string, message: Message): void {
    for (const handler of this.handlers) {
      try {
        handler(from, message);
      } catch (err) {
        log.warn('transport', `message handler of ${this.nodeId} threw on ${JSON.stringify(message.type)} from ${from}`, err);
      }
    }
  }
}
