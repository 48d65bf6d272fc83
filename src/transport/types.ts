/**
 * Node-to-node messaging. The runtime sends plain objects (with a `type` field) to peers named by
 * node id and address; a transport delivers them in order per peer, or reports that it could not.
 * Implementations: in-process (nodes sharing one process) and TCP (framed, authenticated).
 */
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

/** An incoming attachment as a placer sees it while its bytes arrive (attachment.ts). */
export interface InboundFrame {
  /** The attachment's size in bytes. */
  readonly length: number;
  /** Bytes are still to be written into the placed destination. */
  readonly writesToPlace: boolean;
  /** Takes the destination back: the bytes still to come go to private memory. */
  detach(): void;
}

/**
 * Chooses where an attachment of `frame.length` bytes for `header` (the message without field `field`)
 * goes, before its bytes arrive: a Buffer of exactly that length, or undefined for private memory.
 * The placer may call `frame.detach()` later to take its destination back while the frame is still
 * arriving. `from` is the authenticated peer.
 */
export type AttachmentPlacer = (from: string, header: Message, field: string, frame: InboundFrame) => Buffer | undefined;

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
