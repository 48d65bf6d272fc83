/**
 * The two kinds of authenticated TCP connection the TcpTransport uses, one per direction:
 * an OutboundConnection carries this node's messages to one peer; an InboundConnection accepts
 * one peer's connection, authenticates it and delivers its messages. Both speak frames
 * (frame-codec.ts) and run the handshake (handshake.ts) before anything else.
 */
import net from 'node:net';
import { log } from '../util/log.js';
import type { AttachmentPlacer } from './attachment.js';
import { encodeFrame, FrameDecoder, FrameError } from './frame-codec.js';
import { ClientHandshake, HANDSHAKE_MAX_FRAME_BYTES, HandshakeError, ServerHandshake } from './handshake.js';
import type { Message, PeerAddress } from './types.js';
import { TransportError } from './types.js';

/** Socket buffer above which writes wait for 'drain'. */
const WRITE_HIGH_WATER_MARK = 256 * 1024;
/** How long a refused connection may take to read its reject message before it is destroyed. */
const REJECT_LINGER_MS = 1_000;
/** How long close() lets an outbound connection flush before destroying it. */
const CLOSE_LINGER_MS = 1_000;

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

export interface ConnectionSecurity {
  /** This node's id. */
  nodeId: string;
  secret: Buffer;
  /** Payload limit for frames after authentication. */
  maxFrameBytes: number;
}

export interface OutboundOptions extends ConnectionSecurity {
  peer: PeerAddress;
  /** Connect and authenticate within this long, or fail every queued send. */
  connectTimeoutMs: number;
  /** Called once when the connection has failed or closed (the owner forgets it). */
  onClosed: (connection: OutboundConnection) => void;
}

/**
 * This node's connection to one peer: opened on construction, messages queued until the
 * handshake has authenticated the peer, then written in order with back-pressure (a send resolves
 * when its frame has been handed to the socket). On any failure every send not yet written is
 * rejected with TransportError and the connection is finished; the owner opens a new one on the
 * next send.
 */
export class OutboundConnection {
  readonly peer: PeerAddress;
  private state: 'connecting' | 'open' | 'closed' = 'connecting';
  private readonly socket: net.Socket;
  private readonly handshake: ClientHandshake;
  private readonly decoder = new FrameDecoder({ maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES });
  private readonly queue = new Fifo<Pending>();
  private connectTimer: NodeJS.Timeout | undefined;
  private flushScheduled = false;
  private waitingForDrain = false;
  private closedPromise: Promise<void>;

  constructor(private readonly options: OutboundOptions) {
    this.peer = options.peer;
    const { host, port } = parseTcpAddress(options.peer.address);
    this.handshake = new ClientHandshake({
      nodeId: options.nodeId,
      secret: options.secret,
      expectedPeer: options.peer.nodeId,
      timeoutMs: options.connectTimeoutMs,
    });
    this.socket = new net.Socket({ writableHighWaterMark: WRITE_HIGH_WATER_MARK } as net.SocketConstructorOpts);
    this.closedPromise = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.connectTimer = timer(options.connectTimeoutMs, () =>
      this.fail(`no authenticated connection within ${options.connectTimeoutMs} ms`),
    );
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (err) => this.fail(err.message));
    this.socket.on('close', () => this.fail('connection closed'));
    this.socket.connect({ host, port, noDelay: true });
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** Queues one encoded frame (its parts, see encodeFrameParts); resolves once it has been written to the socket. */
  send(parts: readonly Buffer[]): Promise<void> {
    if (this.state === 'closed') return Promise.reject(this.error('connection closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ parts, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Finishes the connection: frames already written are flushed (for a while), the rest rejected. */
  close(reason = 'transport closed'): Promise<void> {
    if (this.state === 'open' && !this.socket.destroyed) {
      this.finish(reason);
      this.socket.end();
      const t = timer(CLOSE_LINGER_MS, () => this.socket.destroy());
      return this.closedPromise.finally(() => clearTimeout(t));
    }
    this.fail(reason);
    return this.closedPromise;
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
      if (this.state !== 'connecting') {
        this.fail(`peer sent ${JSON.stringify(message.type)} on a connection it should only read`);
        return;
      }
      let step;
      try {
        step = this.handshake.receive(message);
      } catch (err) {
        this.fail(err instanceof HandshakeError ? `handshake failed: ${err.message}` : String(err));
        return;
      }
      if (step.send) this.socket.write(encodeFrame(step.send, HANDSHAKE_MAX_FRAME_BYTES));
      if (step.peerNodeId !== undefined) {
        this.state = 'open';
        clearTimeout(this.connectTimer);
        log.debug('transport', `${this.options.nodeId}: connected to ${step.peerNodeId} at ${this.peer.address}`);
        this.scheduleFlush();
      }
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
    if (this.state !== 'open' || this.waitingForDrain) return;
    this.socket.cork();
    for (let item = this.queue.shift(); item; item = this.queue.shift()) {
      let more = true;
      for (const part of item.parts) more = this.socket.write(part);
      item.resolve();
      if (!more) {
        this.waitingForDrain = true;
        this.socket.once('drain', () => {
          this.waitingForDrain = false;
          if (this.queue.length > 0) this.scheduleFlush();
        });
        break;
      }
    }
    this.socket.uncork();
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
    this.handshake.fail(reason);
    const err = this.error(reason);
    for (const item of this.queue.drain()) item.reject(err);
    if (wasOpen) log.info('transport', `${this.options.nodeId}: connection to ${this.peer.nodeId} at ${this.peer.address} ended: ${reason}`);
    else log.debug('transport', `${this.options.nodeId}: could not connect to ${this.peer.nodeId} at ${this.peer.address}: ${reason}`);
    this.options.onClosed(this);
    return true;
  }

  private fail(reason: string): void {
    if (this.finish(reason)) this.socket.destroy();
  }
}

export interface InboundOptions extends ConnectionSecurity {
  handshakeTimeoutMs: number;
  /** Delivers one message from the authenticated peer. */
  deliver: (from: string, message: Message) => void;
  /** Chooses where attachments from the authenticated peer go (default: private memory). */
  placer?: AttachmentPlacer;
  /** Reports a connection refused or dropped for a protocol violation (already logged). */
  onRejected: (remote: string, reason: string) => void;
  onAuthenticated: (remote: string, peer: string) => void;
  onClosed: (connection: InboundConnection) => void;
}

/**
 * A peer's connection to this node: challenge, verify, then deliver its frames. A connection that
 * fails authentication, sends anything other than the handshake first, or sends a malformed or
 * oversized frame is logged (log.warn, with the remote address and the reason) and destroyed.
 */
export class InboundConnection {
  readonly remote: string;
  private state: 'handshake' | 'open' | 'closed' = 'handshake';
  private peerNodeId: string | undefined;
  private readonly handshake: ServerHandshake;
  private readonly decoder = new FrameDecoder({ maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES });
  private readonly handshakeTimer: NodeJS.Timeout;
  private readonly closedPromise: Promise<void>;

  constructor(
    private readonly socket: net.Socket,
    private readonly options: InboundOptions,
  ) {
    this.remote = remoteOf(socket);
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.setNoDelay(true);
    this.handshake = new ServerHandshake({ nodeId: options.nodeId, secret: options.secret, timeoutMs: options.handshakeTimeoutMs });
    this.handshakeTimer = timer(options.handshakeTimeoutMs, () => this.reject(this.handshake.expire().message, false));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      if (this.state !== 'closed') log.debug('transport', `${options.nodeId}: connection from ${this.peerNodeId ?? this.remote}: ${err.message}`);
    });
    socket.on('close', () => {
      this.state = 'closed';
      clearTimeout(this.handshakeTimer);
      options.onClosed(this);
    });
    socket.write(encodeFrame(this.handshake.start(), HANDSHAKE_MAX_FRAME_BYTES));
  }

  /** Destroys the connection; resolves when the socket has closed. */
  close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.handshakeTimer);
    this.socket.destroy();
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
      if (this.state === 'open') {
        this.options.deliver(this.peerNodeId!, message);
        continue;
      }
      let step;
      try {
        step = this.handshake.receive(message);
      } catch (err) {
        if (!(err instanceof HandshakeError)) throw err;
        this.reject(err.message, true);
        return;
      }
      if (step.send) this.socket.write(encodeFrame(step.send, HANDSHAKE_MAX_FRAME_BYTES));
      if (step.peerNodeId !== undefined) {
        this.state = 'open';
        this.peerNodeId = step.peerNodeId;
        clearTimeout(this.handshakeTimer);
        this.decoder.maxFrameBytes = this.options.maxFrameBytes;
        const placer = this.options.placer;
        const peer = step.peerNodeId;
        if (placer) this.decoder.placer = (header, field, frame) => placer(peer, header, field, frame);
        log.debug('transport', `${this.options.nodeId}: accepted ${step.peerNodeId} from ${this.remote}`);
        this.options.onAuthenticated(this.remote, step.peerNodeId);
      }
    }
  }

  /** Logs and drops the connection; during the handshake the client may be told why. */
  private reject(reason: string, tellClient: boolean): void {
    if (this.state === 'closed') return;
    const who = this.peerNodeId === undefined ? this.remote : `${this.peerNodeId} (${this.remote})`;
    this.state = 'closed';
    clearTimeout(this.handshakeTimer);
    log.warn('transport', `${this.options.nodeId}: dropping connection from ${who}: ${reason}`);
    this.options.onRejected(this.remote, reason);
    if (tellClient && !this.socket.destroyed) {
      this.socket.end(encodeFrame(ServerHandshake.rejection(reason), HANDSHAKE_MAX_FRAME_BYTES));
      const t = timer(REJECT_LINGER_MS, () => this.socket.destroy());
      this.socket.once('close', () => clearTimeout(t));
    } else {
      this.socket.destroy();
    }
  }
}
