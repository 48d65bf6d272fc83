import type { RuntimeMessage } from '../../../src/runtime/pool/pool-messages.js';
import type { Rng } from '../../../src/util/rng.js';

interface Envelope {
  from: string;
  to: string;
  message: RuntimeMessage;
}

/**
 * A simulated network: FIFO per sender→receiver pair (as TCP gives), but the test chooses which
 * pair delivers next, so messages between different pairs arrive in any order. Crashed nodes
 * neither send nor receive; what was in flight to or from them is lost.
 */
export class SimNetwork {
  private readonly queues = new Map<string, Envelope[]>();
  private readonly handlers = new Map<string, (from: string, m: RuntimeMessage) => void>();
  private readonly dead = new Set<string>();
  delivered = 0;
  dropped = 0;

  /** Probability that a delivered message is lost instead (as when a TCP connection breaks). */
  constructor(private readonly lossRate = 0) {}

  attach(node: string, handler: (from: string, m: RuntimeMessage) => void): void {
    this.handlers.set(node, handler);
  }

  send(from: string, to: string, message: RuntimeMessage): Promise<void> {
    if (this.dead.has(from) || this.dead.has(to) || !this.handlers.has(to)) return Promise.reject(new Error(`${to} unreachable`));
    const key = `${from}->${to}`;
    let q = this.queues.get(key);
    if (!q) this.queues.set(key, (q = []));
    q.push({ from, to, message: structuredClone(message) });
    return Promise.resolve();
  }

  /** Delivers the head of a random non-empty pair queue; false when nothing is in flight. */
  deliverOne(rng: Rng): boolean {
    const busy = [...this.queues.values()].filter((q) => q.length > 0);
    if (busy.length === 0) return false;
    const env = rng.pick(busy).shift()!;
    if (this.dead.has(env.to)) return true;
    if (this.lossRate > 0 && rng.chance(this.lossRate)) {
      this.dropped++;
      return true;
    }
    this.delivered++;
    this.handlers.get(env.to)!(env.from, env.message);
    return true;
  }

  crash(node: string): void {
    this.dead.add(node);
    for (const [key, q] of this.queues) if (key.startsWith(`${node}->`) || key.endsWith(`->${node}`)) q.length = 0;
  }
}
