/**
 * Mutual authentication of a connection with a shared cluster secret, as pure state machines
 * (no sockets, no timers: the connection feeds them messages and enforces the deadline).
 *
 *   server -> client  challenge  { serverNonce }                       (32 random bytes)
 *   client -> server  response   { nodeId, clientNonce, mac }          mac = HMAC-SHA256(secret,
 *                                    "tidepool-client" | serverNonce | clientNonce | clientNodeId)
 *   server -> client  accept     { nodeId, mac }                       mac = HMAC-SHA256(secret,
 *                                    "tidepool-server" | clientNonce | serverNonce | serverNodeId)
 *
 * Each side proves knowledge of the secret over the other side's fresh nonce, so a recorded
 * reply is worthless on a later connection, and the two labels keep one side's proof from being
 * reflected as the other's. Nonces and MACs have a fixed length, so the concatenations are
 * unambiguous. The secret never crosses the wire. A server that refuses a client may tell it why
 * with a reject message. Any malformed or unexpected message, a MAC mismatch or the deadline
 * passing fails the handshake; a failed or finished handshake accepts no further messages.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Message } from './types.js';

export const HANDSHAKE_NONCE_BYTES = 32;
export const HANDSHAKE_MAC_BYTES = 32;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 5_000;
/** Longest node id (in UTF-8 bytes) a handshake accepts. */
export const MAX_NODE_ID_BYTES = 256;
/** Payload limit for frames before authentication: handshake messages are small. */
export const HANDSHAKE_MAX_FRAME_BYTES = 4_096;

export const HANDSHAKE_VERSION = 1;

export const HandshakeTypes = {
  challenge: 'tidepool/handshake-challenge',
  response: 'tidepool/handshake-response',
  accept: 'tidepool/handshake-accept',
  reject: 'tidepool/handshake-reject',
} as const;

export class HandshakeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandshakeError';
  }
}

export interface HandshakeOptions {
  /** This side's node id (sent to the peer, and bound into this side's proof). */
  nodeId: string;
  /** The shared cluster secret; a string is taken as UTF-8. Must not be empty. */
  secret: Buffer | string;
  /** The handshake fails when it has not finished this long after construction (default 5 s). */
  timeoutMs?: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
  /** Source of nonces, for tests (default crypto.randomBytes). */
  randomBytes?: (size: number) => Buffer;
}

export interface ClientHandshakeOptions extends HandshakeOptions {
  /** When given, the server must authenticate as this node id. */
  expectedPeer?: string;
}

/** What a step asks of the connection: a message to send, and the peer once authenticated. */
export interface HandshakeStep {
  send?: Message;
  /** Set when the handshake has just succeeded. */
  peerNodeId?: string;
}

export type HandshakeState = 'pending' | 'done' | 'failed';

const CLIENT_LABEL = Buffer.from('tidepool-client', 'utf8');
const SERVER_LABEL = Buffer.from('tidepool-server', 'utf8');

function mac(secret: Buffer, label: Buffer, firstNonce: Buffer, secondNonce: Buffer, nodeId: string): Buffer {
  return createHmac('sha256', secret).update(label).update(firstNonce).update(secondNonce).update(nodeId, 'utf8').digest();
}

export function secretBytes(secret: Buffer | string): Buffer {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new TypeError('the cluster secret must be a non-empty string or Buffer');
  return bytes;
}

function validNodeId(nodeId: unknown): nodeId is string {
  return typeof nodeId === 'string' && nodeId.length > 0 && Buffer.byteLength(nodeId, 'utf8') <= MAX_NODE_ID_BYTES;
}

function bytesField(message: Message, field: string, length: number): Buffer {
  const value = message[field];
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new HandshakeError(`malformed ${message.type}: ${field} is not ${length} bytes`);
  }
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function nodeIdField(message: Message): string {
  const nodeId = message.nodeId;
  if (!validNodeId(nodeId)) throw new HandshakeError(`malformed ${message.type}: nodeId is not a non-empty string of at most ${MAX_NODE_ID_BYTES} bytes`);
  return nodeId;
}

function sameMac(actual: Buffer, expected: Buffer): boolean {
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

abstract class Handshake {
  readonly nodeId: string;
  /** Time (per the clock) after which the handshake has failed. */
  readonly deadline: number;
  protected readonly secret: Buffer;
  protected readonly now: () => number;
  protected readonly random: (size: number) => Buffer;
  private currentState: HandshakeState = 'pending';
  private failure: HandshakeError | undefined;
  private peer: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: HandshakeOptions) {
    if (!validNodeId(options.nodeId)) throw new TypeError(`node id must be a non-empty string of at most ${MAX_NODE_ID_BYTES} bytes`);
    this.nodeId = options.nodeId;
    this.secret = secretBytes(options.secret);
    this.now = options.now ?? Date.now;
    this.random = options.randomBytes ?? randomBytes;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.deadline = this.now() + this.timeoutMs;
  }

  get state(): HandshakeState {
    return this.currentState;
  }

  /** The authenticated peer (after success). */
  get peerNodeId(): string | undefined {
    return this.peer;
  }

  /** Why the handshake failed (after failure). */
  get error(): HandshakeError | undefined {
    return this.failure;
  }

  /**
   * Feeds the peer's next message. Returns what to send and, on success, the peer's node id;
   * throws HandshakeError (and the handshake is failed) on anything unexpected.
   */
  receive(message: unknown): HandshakeStep {
    if (this.currentState === 'failed') throw this.failure!;
    if (this.currentState === 'done') throw this.fail('handshake already finished');
    if (this.now() > this.deadline) throw this.expire();
    if (typeof message !== 'object' || message === null || typeof (message as Message).type !== 'string') {
      throw this.fail('malformed handshake message: not an object with a string type');
    }
    try {
      const step = this.step(message as Message);
      if (step.peerNodeId !== undefined) {
        this.currentState = 'done';
        this.peer = step.peerNodeId;
      }
      return step;
    } catch (err) {
      if (err instanceof HandshakeError) throw this.fail(err);
      throw err;
    }
  }

  /** Fails the handshake because its deadline passed (the connection's timer calls this). */
  expire(): HandshakeError {
    return this.fail(`handshake timed out after ${this.timeoutMs} ms`);
  }

  /** Fails the handshake (if still pending) and returns the failure. */
  fail(reason: string | HandshakeError): HandshakeError {
    if (this.currentState !== 'pending') return this.failure ?? new HandshakeError(typeof reason === 'string' ? reason : reason.message);
    this.currentState = 'failed';
    this.failure = typeof reason === 'string' ? new HandshakeError(reason) : reason;
    return this.failure;
  }

  protected abstract step(message: Message): HandshakeStep;

  protected expect(message: Message, type: string): void {
    if (message.type === HandshakeTypes.reject) {
      const reason = typeof message.reason === 'string' ? message.reason.slice(0, 200) : 'no reason given';
      throw new HandshakeError(`rejected by peer: ${reason}`);
    }
    if (message.type !== type) throw new HandshakeError(`expected ${type}, got ${JSON.stringify(message.type.slice(0, 100))}`);
  }
}

/** The accepting side: sends the challenge, verifies the client, proves itself. */
export class ServerHandshake extends Handshake {
  private readonly serverNonce: Buffer;
  private started = false;

  constructor(options: HandshakeOptions) {
    super(options);
    this.serverNonce = this.random(HANDSHAKE_NONCE_BYTES);
  }

  /** The first message, sent as soon as the connection is accepted. */
  start(): Message {
    if (this.started) throw new HandshakeError('handshake already started');
    this.started = true;
    return { type: HandshakeTypes.challenge, version: HANDSHAKE_VERSION, nonce: this.serverNonce };
  }

  /** A message telling the client why it was refused (optional courtesy before closing). */
  static rejection(reason: string): Message {
    return { type: HandshakeTypes.reject, reason };
  }

  protected step(message: Message): HandshakeStep {
    if (!this.started) throw new HandshakeError('handshake not started: send the challenge first');
    this.expect(message, HandshakeTypes.response);
    const clientNodeId = nodeIdField(message);
    const clientNonce = bytesField(message, 'nonce', HANDSHAKE_NONCE_BYTES);
    const clientMac = bytesField(message, 'mac', HANDSHAKE_MAC_BYTES);
    if (clientNonce.equals(this.serverNonce)) throw new HandshakeError('authentication failed: nonce reused');
    if (!sameMac(clientMac, mac(this.secret, CLIENT_LABEL, this.serverNonce, clientNonce, clientNodeId))) {
      throw new HandshakeError('authentication failed: client proof does not match the cluster secret');
    }
    return {
      send: { type: HandshakeTypes.accept, nodeId: this.nodeId, mac: mac(this.secret, SERVER_LABEL, clientNonce, this.serverNonce, this.nodeId) },
      peerNodeId: clientNodeId,
    };
  }
}

/** The connecting side: answers the challenge, then verifies the server's proof. */
export class ClientHandshake extends Handshake {
  private readonly clientNonce: Buffer;
  private readonly expectedPeer: string | undefined;
  private serverNonce: Buffer | undefined;

  constructor(options: ClientHandshakeOptions) {
    super(options);
    this.clientNonce = this.random(HANDSHAKE_NONCE_BYTES);
    this.expectedPeer = options.expectedPeer;
  }

  protected step(message: Message): HandshakeStep {
    if (this.serverNonce === undefined) {
      this.expect(message, HandshakeTypes.challenge);
      if (message.version !== HANDSHAKE_VERSION) {
        throw new HandshakeError(`unsupported handshake version ${JSON.stringify(message.version)} (this node speaks ${HANDSHAKE_VERSION})`);
      }
      const serverNonce = bytesField(message, 'nonce', HANDSHAKE_NONCE_BYTES);
      if (serverNonce.equals(this.clientNonce)) throw new HandshakeError('authentication failed: nonce reused');
      this.serverNonce = Buffer.from(serverNonce);
      return {
        send: {
          type: HandshakeTypes.response,
          nodeId: this.nodeId,
          nonce: this.clientNonce,
          mac: mac(this.secret, CLIENT_LABEL, this.serverNonce, this.clientNonce, this.nodeId),
        },
      };
    }
    this.expect(message, HandshakeTypes.accept);
    const serverNodeId = nodeIdField(message);
    const serverMac = bytesField(message, 'mac', HANDSHAKE_MAC_BYTES);
    if (!sameMac(serverMac, mac(this.secret, SERVER_LABEL, this.clientNonce, this.serverNonce, serverNodeId))) {
      throw new HandshakeError('authentication failed: server proof does not match the cluster secret');
    }
    if (this.expectedPeer !== undefined && serverNodeId !== this.expectedPeer) {
      throw new HandshakeError(`connected to node ${JSON.stringify(serverNodeId)}, expected ${JSON.stringify(this.expectedPeer)}`);
    }
    return { peerNodeId: serverNodeId };
  }
}
