/**
 * Transport over TCP: length-prefixed msgpack frames on connections that both ends authenticate
 * with the shared cluster secret (handshake.ts). Each node listens on one port and opens one
 * outbound connection per peer, lazily on the first send, and reuses it; a connection that fails
 * is forgotten and the next send opens a new one. Messages from a peer are delivered with the
 * node id the peer authenticated as. See tcp-connection.ts for the connection protocol.
 *
 * `send` encodes the message at once (mutating it afterwards does not change what is sent, except
 * bytes the sender lent: see attachment.ts) and resolves when the frame has been written to the
 * connection. A send to a peer that cannot be
 * connected to and authenticated within `connectTimeoutMs` rejects with TransportError; a refused
 * connection rejects at once (no retries: the caller decides).
 */
import net from 'node:net';
import { Emitter } from '../util/emitter.js';
import { log } from '../util/log.js';
import type { AttachmentPlacer } from './attachment.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrameParts } from './frame-codec.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, secretBytes } from './handshake.js';
import { formatTcpAddress, InboundConnection, OutboundConnection, parseTcpAddress } from './tcp-connection.js';
import type { Message, MessageHandler, PeerAddress, Transport } from './types.js';
import { TransportError } from './types.js';

export interface TcpTransportOptions {
  nodeId: string;
  /** The shared cluster secret (a string is taken as UTF-8). */
  secret: Buffer | string;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Port to listen on (default 0: an ephemeral port, see `address` after start()). */
  port?: number;
  /** Largest message payload sent or accepted, in bytes (default 64 MiB). */
  maxFrameBytes?: number;
  /** Connect to and authenticate a peer within this long, or fail the sends (default 5 s). */
  connectTimeoutMs?: number;
  /** Drop an incoming connection that has not authenticated within this long (default 5 s). */
  handshakeTimeoutMs?: number;
}

export interface TcpTransportEvents extends Record<string, unknown> {
  /** An incoming connection passed the handshake. */
  accepted: { remote: string; peer: string };
  /** An incoming connection was dropped: failed authentication, protocol violation, timeout. */
  rejected: { remote: string; reason: string };
}

export class TcpTransport implements Transport {
  readonly nodeId: string;
  /** Observability (and test) hooks: accepted and rejected incoming connections. */
  readonly events = new Emitter<TcpTransportEvents>();
  private readonly secret: Buffer;
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly maxFrameBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly handshakeTimeoutMs: number;
  private readonly handlers = new Set<MessageHandler>();
  private readonly placers = new Set<AttachmentPlacer>();
  private readonly outbound = new Map<string, OutboundConnection>();
  private readonly inbound = new Set<InboundConnection>();
  private server: net.Server | undefined;
  private boundAddress: string | undefined;
  private state: 'new' | 'starting' | 'started' | 'closed' = 'new';
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: TcpTransportOptions) {
    if (typeof options.nodeId !== 'string' || options.nodeId.length === 0) throw new TypeError('node id must be a non-empty string');
    this.nodeId = options.nodeId;
    this.secret = secretBytes(options.secret);
    this.host = options.host ?? '127.0.0.1';
    this.requestedPort = options.port ?? 0;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  }

  /** "tcp://host:port", once started. */
  get address(): string {
    if (this.boundAddress === undefined) throw new TransportError(`transport ${this.nodeId} has no address before start()`, this.nodeId);
    return this.boundAddress;
  }

  /** The port listened on, once started. */
  get port(): number {
    return parseTcpAddress(this.address).port;
  }

  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new TransportError(`transport ${this.nodeId} was already ${this.state}`, this.nodeId));
    this.state = 'starting';
    this.starting = this.listen();
    return this.starting;
  }

  private async listen(): Promise<void> {
    const server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
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
    log.info('transport', `${this.nodeId}: listening on ${this.boundAddress}`);
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
      ...[...this.outbound.values()].map((c) => c.close()),
      ...[...this.inbound].map((c) => c.close()),
    ]);
    this.outbound.clear();
    this.inbound.clear();
    log.info('transport', `${this.nodeId}: closed`);
  }

  /** The live connection to this peer, or a new one (replacing one to an old address). */
  private connectionTo(to: PeerAddress): OutboundConnection {
    const existing = this.outbound.get(to.nodeId);
    if (existing && !existing.isClosed) {
      if (existing.peer.address === to.address) return existing;
      void existing.close(`peer moved to ${to.address}`);
    }
    const connection = new OutboundConnection({
      peer: { nodeId: to.nodeId, address: to.address },
      nodeId: this.nodeId,
      secret: this.secret,
      maxFrameBytes: this.maxFrameBytes,
      connectTimeoutMs: this.connectTimeoutMs,
      onClosed: (c) => {
        if (this.outbound.get(c.peer.nodeId) === c) this.outbound.delete(c.peer.nodeId);
      },
    });
    this.outbound.set(to.nodeId, connection);
    return connection;
  }

  private accept(socket: net.Socket): void {
    if (this.state === 'closed') {
      socket.destroy();
      return;
    }
    const connection = new InboundConnection(socket, {
      nodeId: this.nodeId,
      secret: this.secret,
      maxFrameBytes: this.maxFrameBytes,
      handshakeTimeoutMs: this.handshakeTimeoutMs,
      deliver: (from, message) => this.deliver(from, message),
      placer: (from, header, field, frame) => this.place(from, header, field, frame),
      onAuthenticated: (remote, peer) => this.events.emit('accepted', { remote, peer }),
      onRejected: (remote, reason) => this.events.emit('rejected', { remote, reason }),
      onClosed: (c) => this.inbound.delete(c),
    });
    this.inbound.add(connection);
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
