/**
 * Transport between nodes that share one process (tests, single-machine runs). Nodes meet on a
 * named InProcessNetwork; addresses are "inproc://<network>/<nodeId>".
 *
 * Delivery is asynchronous: `send` queues the message and handlers run on a later turn of the
 * event loop, never inside `send`; messages from one sender to one receiver arrive in send order.
 * Messages are passed by reference, not copied: a sender must not mutate a message (or anything
 * it references) after sending it, and receivers should treat messages as read-only.
 *
 * Test hooks: `partition(a, b)` makes sends between two nodes reject (both directions) until
 * `heal(a, b)`; messages already queued when a partition starts, or when the receiver closes, are
 * dropped, as a real network would lose them in flight.
 */
import { log } from '../util/log.js';
import type { Message, MessageHandler, PeerAddress, Transport } from './types.js';
import { TransportError } from './types.js';

const SCHEME = 'inproc://';
const NETWORK_NAME = /^[A-Za-z0-9._-]+$/;

interface Envelope {
  from: string;
  message: Message;
}

function pairKey(a: string, b: string): string {
  return a < b ? JSON.stringify([a, b]) : JSON.stringify([b, a]);
}

/** A named set of in-process nodes. */
export class InProcessNetwork {
  private static readonly networks = new Map<string, InProcessNetwork>();

  /** The network with this name, created on first use. */
  static get(name = 'default'): InProcessNetwork {
    let network = InProcessNetwork.networks.get(name);
    if (!network) {
      network = new InProcessNetwork(name);
      InProcessNetwork.networks.set(name, network);
    }
    return network;
  }

  private readonly nodes = new Map<string, InProcessTransport>();
  private readonly partitions = new Set<string>();

  private constructor(readonly name: string) {
    if (!NETWORK_NAME.test(name)) throw new TypeError(`in-process network name must match ${NETWORK_NAME}, got ${JSON.stringify(name)}`);
  }

  /** "inproc://<network>/<nodeId>". */
  addressOf(nodeId: string): string {
    return `${SCHEME}${this.name}/${nodeId}`;
  }

  /** Node ids currently started on this network. */
  nodeIds(): string[] {
    return [...this.nodes.keys()];
  }

  /** Test hook: sends between `a` and `b` (either direction) reject until `heal(a, b)`. */
  partition(a: string, b: string): void {
    this.partitions.add(pairKey(a, b));
  }

  heal(a: string, b: string): void {
    this.partitions.delete(pairKey(a, b));
  }

  /** Lifts every partition. */
  healAll(): void {
    this.partitions.clear();
  }

  isPartitioned(a: string, b: string): boolean {
    return this.partitions.size > 0 && this.partitions.has(pairKey(a, b));
  }

  /** @internal */
  attach(node: InProcessTransport): void {
    if (this.nodes.has(node.nodeId)) throw new TransportError(`node ${JSON.stringify(node.nodeId)} is already on in-process network "${this.name}"`, node.nodeId);
    this.nodes.set(node.nodeId, node);
  }

  /** @internal */
  detach(node: InProcessTransport): void {
    if (this.nodes.get(node.nodeId) === node) this.nodes.delete(node.nodeId);
  }

  /** @internal */
  lookup(nodeId: string): InProcessTransport | undefined {
    return this.nodes.get(nodeId);
  }
}

export class InProcessTransport implements Transport {
  readonly address: string;
  private readonly handlers = new Set<MessageHandler>();
  private state: 'new' | 'started' | 'closed' = 'new';
  /** Messages waiting to be delivered to this node, in arrival order. */
  private inbox: Envelope[] = [];
  private drainScheduled = false;

  constructor(
    readonly nodeId: string,
    readonly network: InProcessNetwork = InProcessNetwork.get(),
  ) {
    if (typeof nodeId !== 'string' || nodeId.length === 0) throw new TypeError('node id must be a non-empty string');
    this.address = network.addressOf(nodeId);
  }

  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new TransportError(`transport ${this.nodeId} was already ${this.state}`, this.nodeId));
    try {
      this.network.attach(this);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    this.state = 'started';
    return Promise.resolve();
  }

  send(to: PeerAddress, message: Message): Promise<void> {
    try {
      this.route(to).enqueue(this.nodeId, message);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  onMessage(handler: MessageHandler): () => void {
    // Wrapped so that subscribing the same function twice gives two subscriptions.
    const entry: MessageHandler = (from, message) => handler(from, message);
    this.handlers.add(entry);
    return () => this.handlers.delete(entry);
  }

  close(): Promise<void> {
    if (this.state === 'started') this.network.detach(this);
    this.state = 'closed';
    this.inbox = [];
    return Promise.resolve();
  }

  private route(to: PeerAddress): InProcessTransport {
    if (this.state !== 'started') throw new TransportError(`transport ${this.nodeId} is ${this.state === 'new' ? 'not started' : 'closed'}`, to.nodeId);
    const expected = this.network.addressOf(to.nodeId);
    if (to.address !== expected) {
      throw new TransportError(`cannot reach ${to.nodeId} at ${JSON.stringify(to.address)}: this transport reaches ${expected}`, to.nodeId);
    }
    const target = this.network.lookup(to.nodeId);
    if (!target) throw new TransportError(`no node ${JSON.stringify(to.nodeId)} on in-process network "${this.network.name}"`, to.nodeId);
    if (this.network.isPartitioned(this.nodeId, to.nodeId)) {
      throw new TransportError(`network partition between ${this.nodeId} and ${to.nodeId}`, to.nodeId);
    }
    return target;
  }

  private enqueue(from: string, message: Message): void {
    this.inbox.push({ from, message });
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Delivers what was queued before this turn; messages sent meanwhile wait for the next one. */
  private drain(): void {
    this.drainScheduled = false;
    const batch = this.inbox;
    this.inbox = [];
    for (const { from, message } of batch) {
      if (this.state !== 'started') return;
      if (this.network.isPartitioned(from, this.nodeId)) continue;
      for (const handler of [...this.handlers]) {
        try {
          handler(from, message);
        } catch (err) {
          log.warn('transport', `message handler of ${this.nodeId} threw on ${JSON.stringify(message.type)} from ${from}`, err);
        }
      }
    }
  }
}
