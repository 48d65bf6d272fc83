/**
 * Node-to-node messaging. The runtime sends plain objects (with a `type` field) to peers named by
 * node id and address; a transport delivers them in order per peer, or reports that it could not.
 * Implementations: in-process (nodes sharing one process) and TCP (framed, authenticated).
 */
import type { AttachmentPlacer } from './attachment.js';

/** Any message: a plain, serializable object with a string `type`. */
export interface Message {
  type: string;
  [key: string]: unknown;
}

/** Where a peer can be reached: its node id and the address it published in the membership. */
export interface PeerAddress {
  nodeId: string;
  /** "inproc://<network>/<nodeId>" or "tcp://host:port". */
  address: string;
}

export type MessageHandler = (from: string, message: Message) => void;

export interface Transport {
  readonly nodeId: string;
  /** The address peers use to reach this node (valid after start()). */
  readonly address: string;
  /** Starts listening. */
  start(): Promise<void>;
  /**
   * Sends one message. Messages to one peer arrive in send order. Rejects (TransportError) when
   * the peer cannot be reached; a resolved send means the message was handed to the connection,
   * not that the peer processed it (protocols acknowledge what they need to).
   */
  send(to: PeerAddress, message: Message): Promise<void>;
  /** Subscribes to incoming messages; returns the unsubscribe function. */
  onMessage(handler: MessageHandler): () => void;
  /**
   * Optional (transports that frame bytes): lets a consumer choose, before they arrive, where the
   * lent bytes of an incoming message go (attachment.ts); returns the unsubscribe function.
   */
  placeAttachments?(placer: AttachmentPlacer): () => void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

export class TransportError extends Error {
  constructor(message: string, readonly peer?: string) {
    super(message);
    this.name = 'TransportError';
  }
}
