/**
 * The two kinds of connection the TcpTransport uses, one per direction, both mutual TLS 1.3 with
 * the node's channel credentials (channel-credentials.ts): an OutboundConnection carries this node's
 * messages to one peer; an InboundConnection admits one peer's connection and delivers its messages.
 * Both speak frames (frame-codec.ts) inside TLS, so every frame is confidential and integrity-protected:
 * a record altered, injected or replayed on the wire fails TLS's authentication and the receiver drops
 * the connection with the reason.
 *
 * After the TLS handshake the accepting side checks the peer's certificate (a trusted CA, one node id)
 * and answers with one frame, `channel-ready`, or `channel-refused` with the reason before it closes;
 * the connecting side checks the peer's certificate names the node it meant to reach, and sends nothing
 * before `channel-ready` (in TLS 1.3 the client finishes its handshake before the server has judged its
 * certificate, so without the answer a refused client would write into a closing connection).
 */
import net from 'node:net';
import tls from 'node:tls';
import { log } from '../util/log.js';
import { type ChannelCredentials, checkPeer } from './channel-credentials.js';
import { encodeFrame, FrameDecoder, FrameError } from './frame-codec.js';
import type { AttachmentPlacer, Message, PeerAddress } from './types.js';
import { TransportError } from './types.js';

/** Socket buffer above which writes wait for 'drain'. */
const WRITE_HIGH_WATER_MARK = 256 * 1024;
/**
 * Buffers at least this large are written apart from the frames around them (see flush): copying a
 * smaller one into a batch costs less than the extra write and TLS record.
 */
const SEPARATE_WRITE_BYTES = 64 * 1024;
/** How long a refused connection may take to read its refusal before it is destroyed. */
const REJECT_LINGER_MS = 1_000;
/** How long close() lets an outbound connection flush before destroying it. */
const CLOSE_LINGER_MS = 1_000;
/** Payload limit for the accepting side's one answer (`channel-ready` or `channel-refused`). */
const ANSWER_MAX_FRAME_BYTES = 4_096;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const CHANNEL_VERSION = 1;

export const ChannelTypes = {
  ready: 'tidepool/channel-ready',
  refused: 'tidepool/channel-refused',
} as const;

export interface TcpEndpoint {
  host: string;
  port: number;
}

/** Parses "tcp://host:port" (IPv6 hosts in brackets: "tcp://[::1]:4000"). */
export function parseTcpAddress(address: string): TcpEndpoint {
  const match = /^tcp:\/\/(?:\[([0-9A-Fa-f:.]+)\]|([^:/[\]]+)):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65_535) throw new TransportError(`bad address ${JSON.stringify(address)}: expected tcp://host:port`);
  return { host: match[1] ?? match[2]!, port };
}

export function formatTcpAddress(host: string, port: number): string {
  return host.includes(':') ? `tcp://[${host}]:${port}` : `tcp://${host}:${port}`;
}

function remoteOf(socket: net.Socket): string {
  const host = socket.remoteAddress ?? 'unknown';
  return `${host.includes(':') ? `[${host}]` : host}:${socket.remotePort ?? '?'}`;
}

/** Sets a timer that does not keep the process alive. */
function timer(ms: number, fn: () => void): NodeJS.Timeout {
  const t = setTimeout(fn, ms);
  t.unref();
  return t;
}

interface Pending {
  /** The frame's buffers (an attachment is written as its own buffer, not copied). */
  parts: readonly Buffer[];
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A FIFO with O(1) shift (an array with a moving head, compacted now and then). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}

export interface ConnectionOptions {
  /** This node's credentials (the current ones when the connection is made). */
  credentials: ChannelCredentials;
  /** Payload limit for frames. */
  maxFrameBytes: number;
}

export interface OutboundOptions extends ConnectionOptions {
  peer: PeerAddress;
  /** Connect and be admitted within this long, or fail every queued send. */
  connectTimeoutMs: number;
  /** Connect only once this has settled (the connection this one replaces has closed: keeps the peer's order). */
  after?: Promise<void>;
  /** Called once when the connection has failed or closed (the owner forgets it). */
  onClosed: (connection: OutboundConnection) => void;
}

/**
 * This node's connection to one peer: opened on construction, messages queued until the peer has
 * been verified and has admitted this node, then written in order with back-pressure (a send resolves
 * when its frame has been handed to the socket). On any failure every send not yet written is
 * rejected with TransportError and the connection is finished; the owner opens a new one on the
 * next send.
 */
export class OutboundConnection {
  readonly peer: PeerAddress;
  /** Fingerprints of the peer's verified certificate chain (once verified). */
  chain: readonly string[] = [];
  private state: 'connecting' | 'open' | 'closed' = 'connecting';
  private socket: tls.TLSSocket | undefined;
  private readonly decoder = new FrameDecoder({ maxFrameBytes: ANSWER_MAX_FRAME_BYTES });
  private readonly queue = new Fifo<Pending>();
  private readonly connectTimer: NodeJS.Timeout;
  private flushScheduled = false;
  private waitingForDrain = false;
  private retiring = false;
  private readonly closedPromise: Promise<void>;
  private markClosed!: () => void;

  constructor(private readonly options: OutboundOptions) {
    this.peer = options.peer;
    this.closedPromise = new Promise((resolve) => (this.markClosed = resolve));
    this.connectTimer = timer(options.connectTimeoutMs, () =>
      this.fail(`not connected and admitted within ${options.connectTimeoutMs} ms`),
    );
    const target = parseTcpAddress(options.peer.address);
    if (options.after) void options.after.then(() => this.connect(target));
    else this.connect(target);
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** Resolves when the connection is finished and its socket (if any) has closed. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** Queues one encoded frame (its parts, see encodeFrameParts); resolves once it has been written to the socket. */
  send(parts: readonly Buffer[]): Promise<void> {
    if (this.state === 'closed') return Promise.reject(this.error('connection closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ parts, resolve, reject });
      this.scheduleFlush();
    });
  }

  /**
   * Takes no more sends (the owner sends through a new connection, made with newer credentials, once
   * this one has closed); what is queued is still written, then the connection ends.
   */
  retire(): void {
    if (this.state === 'closed' || this.retiring) return;
    this.retiring = true;
    this.scheduleFlush();
  }

  /** Finishes the connection: frames already written are flushed (for a while), the rest rejected. */
  close(reason = 'transport closed'): Promise<void> {
    const socket = this.socket;
    if (this.state === 'open' && socket && !socket.destroyed) {
      this.finish(reason);
      this.endSocket(socket);
      return this.closedPromise;
    }
    this.fail(reason);
    return this.closedPromise;
  }

  private connect(target: TcpEndpoint): void {
    if (this.state === 'closed') return;
    const { credentials } = this.options;
    const socket = tls.connect({
      host: target.host,
      port: target.port,
      secureContext: credentials.secureContext,
      // The peer is checked here, with the reason kept (checkPeer): by CA and node id, not host name.
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
      // Not in @types/node 20, but tls.connect passes it to the socket (both directions).
      highWaterMark: WRITE_HIGH_WATER_MARK,
      ...(net.isIP(target.host) ? {} : { servername: target.host }),
    } as tls.ConnectionOptions);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.once('close', () => {
      this.fail('connection closed');
      this.markClosed();
    });
    socket.on('error', (err) => this.fail(describeSocketError(err)));
    socket.once('secureConnect', () => this.verify(socket));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  private verify(socket: tls.TLSSocket): void {
    if (this.state !== 'connecting') return;
    const check = checkPeer(socket);
    const refusal = !check.ok
      ? `the peer's certificate is refused: ${check.reason}`
      : check.nodeId !== this.peer.nodeId ? `connected to node ${JSON.stringify(check.nodeId)}, expected ${JSON.stringify(this.peer.nodeId)}` : undefined;
    if (refusal === undefined) {
      this.chain = (check as { chain: string[] }).chain;
      return;
    }
    // Ended, not reset: the peer reads our handshake to its end and judges (and logs) us in turn.
    if (this.finish(refusal)) this.endSocket(socket);
  }

  private onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    let messages: Message[];
    try {
      messages = this.decoder.push(chunk);
    } catch (err) {
      this.fail(`bad frame from peer: ${(err as Error).message}`);
      return;
    }
    for (const message of messages) {
      if (this.state !== 'connecting' || this.chain.length === 0) {
        this.fail(`peer sent ${JSON.stringify(message.type)} on a connection it should only read`);
        return;
      }
      if (message.type === ChannelTypes.refused) {
        this.fail(`refused by peer: ${typeof message.reason === 'string' ? message.reason.slice(0, 300) : 'no reason given'}`);
        return;
      }
      if (message.type !== ChannelTypes.ready || message.version !== CHANNEL_VERSION) {
        this.fail(`expected ${ChannelTypes.ready} (version ${CHANNEL_VERSION}), got ${JSON.stringify(message.type.slice(0, 100))} version ${JSON.stringify(message.version)}`);
        return;
      }
      this.state = 'open';
      clearTimeout(this.connectTimer);
      log.debug('transport', `${this.options.credentials.nodeId}: connected to ${this.peer.nodeId} at ${this.peer.address}`);
      this.scheduleFlush();
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.state !== 'open' || this.waitingForDrain) return;
    this.flushScheduled = true;
    // Frames sent in the same turn go out in one corked write (one syscall for many small frames).
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const socket = this.socket;
    if (this.state !== 'open' || this.waitingForDrain || !socket) return;
    socket.cork();
    for (let item = this.queue.shift(); item; item = this.queue.shift()) {
      let more = true;
      for (const part of item.parts) {
        if (part.length < SEPARATE_WRITE_BYTES) {
          more = socket.write(part);
          continue;
        }
        // A large buffer (a big frame, an attachment) is written on its own: a corked batch reaches TLS
        // as one writev, which Node copies into one buffer before encrypting it; a single buffer is
        // encrypted where it lies. What was corked before it goes first, as one write.
        socket.uncork();
        more = socket.write(part);
        socket.cork();
      }
      item.resolve();
      if (!more) {
        this.waitingForDrain = true;
        socket.once('drain', () => {
          this.waitingForDrain = false;
          this.scheduleFlush();
        });
        break;
      }
    }
    socket.uncork();
    if (this.retiring && this.queue.length === 0 && !this.waitingForDrain) {
      this.finish('retired: newer channel credentials');
      this.endSocket(socket);
    }
  }

  /** Ends the socket after what was written, destroying it if it has not closed after a while. */
  private endSocket(socket: tls.TLSSocket): void {
    socket.end();
    const t = timer(CLOSE_LINGER_MS, () => socket.destroy());
    socket.once('close', () => clearTimeout(t));
  }

  private error(reason: string): TransportError {
    return new TransportError(`cannot send to ${this.peer.nodeId} at ${this.peer.address}: ${reason}`, this.peer.nodeId);
  }

  /** Marks the connection finished and rejects what was not written; does not touch the socket. */
  private finish(reason: string): boolean {
    if (this.state === 'closed') return false;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    clearTimeout(this.connectTimer);
    const err = this.error(reason);
    for (const item of this.queue.drain()) item.reject(err);
    const me = this.options.credentials.nodeId;
    if (wasOpen) log.info('transport', `${me}: connection to ${this.peer.nodeId} at ${this.peer.address} ended: ${reason}`);
    else log.debug('transport', `${me}: could not connect to ${this.peer.nodeId} at ${this.peer.address}: ${reason}`);
    this.options.onClosed(this);
    return true;
  }

  private fail(reason: string): void {
    if (!this.finish(reason)) return;
    if (this.socket) this.socket.destroy();
    else this.markClosed();
  }
}

export interface InboundOptions extends ConnectionOptions {
  /** Delivers one message from the admitted peer. */
  deliver: (from: string, message: Message) => void;
  /** Chooses where attachments from the admitted peer go (default: private memory). */
  placer?: AttachmentPlacer;
  /** Reports a connection refused or dropped: untrusted peer, protocol violation, failed TLS record (already logged). */
  onRejected: (remote: string, reason: string) => void;
  onAdmitted: (remote: string, peer: string) => void;
  onClosed: (connection: InboundConnection) => void;
}

/**
 * A peer's connection to this node, its TLS handshake finished: verify the peer, answer, then deliver
 * its frames. A connection from an untrusted peer, one that sends a malformed or oversized frame, or
 * one whose TLS records fail authentication (altered, injected or replayed bytes) is logged
 * (log.warn, with the peer and the reason) and dropped.
 */
export class InboundConnection {
  readonly remote: string;
  /** The admitted peer, and the fingerprints of its verified certificate chain. */
  peerNodeId: string | undefined;
  chain: readonly string[] = [];
  private state: 'open' | 'closed' = 'open';
  private readonly decoder: FrameDecoder;
  private readonly closedPromise: Promise<void>;

  constructor(
    private readonly socket: tls.TLSSocket,
    private readonly options: InboundOptions,
  ) {
    this.remote = remoteOf(socket);
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    this.decoder = new FrameDecoder({ maxFrameBytes: options.maxFrameBytes });
    socket.setNoDelay(true);
    socket.on('error', (err) => this.onSocketError(err));
    socket.on('close', () => {
      this.state = 'closed';
      options.onClosed(this);
    });
    const check = checkPeer(socket);
    if (!check.ok) {
      this.reject(check.reason, true);
      return;
    }
    const peer = check.nodeId;
    this.peerNodeId = peer;
    this.chain = check.chain;
    const placer = options.placer;
    if (placer) this.decoder.placer = (header, field, frame) => placer(peer, header, field, frame);
    socket.write(encodeFrame({ type: ChannelTypes.ready, version: CHANNEL_VERSION }, ANSWER_MAX_FRAME_BYTES));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    log.debug('transport', `${options.credentials.nodeId}: admitted ${peer} from ${this.remote}`);
    options.onAdmitted(this.remote, peer);
  }

  /** Destroys the connection; resolves when the socket has closed. */
  close(): Promise<void> {
    this.state = 'closed';
    this.socket.destroy();
    return this.closedPromise;
  }

  /** Drops the connection (logged and reported) because of `reason`, e.g. its peer is no longer trusted. */
  drop(reason: string): Promise<void> {
    this.reject(reason, false);
    return this.closedPromise;
  }

  private onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    let messages: Message[];
    try {
      messages = this.decoder.push(chunk);
    } catch (err) {
      this.reject(err instanceof FrameError ? err.message : String(err), false);
      return;
    }
    for (const message of messages) {
      // A handler may have closed the transport (and this connection) while delivering.
      if ((this.state as InboundConnection['state']) === 'closed') return;
      this.options.deliver(this.peerNodeId!, message);
    }
  }

  private onSocketError(err: Error): void {
    if (this.state === 'closed') return;
    // TLS failures (a record that fails authentication: altered, injected, replayed) are an attack or a
    // fault on the path and worth a warning; a peer that went away is not.
    if (isTlsError(err)) this.reject(describeSocketError(err), false);
    else log.debug('transport', `${this.options.credentials.nodeId}: connection from ${this.peerNodeId ?? this.remote}: ${err.message}`);
  }

  /** Logs and drops the connection; a refused peer may be told why. */
  private reject(reason: string, tellPeer: boolean): void {
    if (this.state === 'closed') return;
    const who = this.peerNodeId === undefined ? this.remote : `${this.peerNodeId} (${this.remote})`;
    this.state = 'closed';
    log.warn('transport', `${this.options.credentials.nodeId}: dropping connection from ${who}: ${reason}`);
    this.options.onRejected(this.remote, reason);
    if (tellPeer && !this.socket.destroyed) {
      this.socket.end(encodeFrame({ type: ChannelTypes.refused, reason }, ANSWER_MAX_FRAME_BYTES));
      const t = timer(REJECT_LINGER_MS, () => this.socket.destroy());
      this.socket.once('close', () => clearTimeout(t));
    } else {
      this.socket.destroy();
    }
  }
}

/** Whether a socket error comes from TLS (OpenSSL) rather than from the network. */
export function isTlsError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /SSL routines|alert/i.test(err.message);
}

/** A socket error for logs: TLS record failures say what they mean. */
export function describeSocketError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (/BAD_RECORD_MAC|DECRYPTION_FAILED/.test(code) || /bad record mac|decryption failed/i.test(err.message)) {
    return `a TLS record failed authentication (bytes altered, injected or replayed on the way): ${err.message.trim()}`;
  }
  return isTlsError(err) ? `TLS: ${err.message.trim()}` : err.message;
}
