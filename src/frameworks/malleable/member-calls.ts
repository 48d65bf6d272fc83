/**
 * The leader's commands to members as calls over layer messages: each `mall-cmd` carries an id and
 * is answered by a `mall-reply`; a call to a node that is not (or no longer) in the job fails with
 * NodeLost — at once if it is gone, or when it leaves, or when the message bounces.
 */
import type { LayerBody, LeaderContext } from '../../runtime/kinds/job-kind.js';
import type { MalleableMember } from './member.js';
import type { Command } from './protocol.js';

export class NodeLost extends Error {
  constructor(readonly node: string) {
    super(`node ${node} left the job`);
  }
}

/** A reply that never came: its node left, as the caller allowed. */
const LEFT = Symbol('left');

interface Pending {
  node: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class MemberCalls {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly offLeft: () => void;

  constructor(private readonly ctx: LeaderContext, private readonly own: MalleableMember, onLeaving: (node: string) => void) {
    own.setLeaderHooks({
      onReply: (from, body) => this.onReply(from, body),
      onBounce: (to, id) => this.fail(id, new NodeLost(to)),
      onLeaving,
    });
    this.offLeft = ctx.membership.on('left', (m) => {
      for (const [id, p] of this.pending) if (p.node === m.id) this.fail(id, new NodeLost(m.id));
    });
  }

  /** The job's live members, this node included. */
  live(): Set<string> {
    return new Set([this.ctx.nodeId, ...this.ctx.peers()]);
  }

  call<T>(node: string, cmd: Command, epoch: number): Promise<T> {
    if (node === this.ctx.nodeId) return this.own.command(cmd, epoch) as Promise<T>;
    if (!this.live().has(node)) return Promise.reject(new NodeLost(node));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { node, resolve: resolve as (v: unknown) => void, reject });
      this.ctx.send(node, { type: 'mall-cmd', id, epoch, cmd: cmd as never }).catch(() => this.fail(id, new NodeLost(node)));
    });
  }

  /**
   * The same command (or one per node) to every node; resolves with the replies in node order.
   * `mayLeave(node)`, asked when a node has left the job meanwhile: true if that is no failure of the
   * whole (its reply is then missing from the result).
   */
  async all<T>(nodes: readonly string[], cmd: Command | ((node: string) => Command), epoch: number, mayLeave?: (node: string) => boolean): Promise<T[]> {
    const replies = await Promise.all(nodes.map((n): Promise<{ reply: T } | typeof LEFT> => {
      const reply = this.call<T>(n, typeof cmd === 'function' ? cmd(n) : cmd, epoch).then((r) => ({ reply: r }));
      return mayLeave ? reply.catch((err: unknown) => (err instanceof NodeLost && mayLeave(n) ? LEFT : Promise.reject(err as Error))) : reply;
    }));
    return replies.flatMap((r) => (r === LEFT ? [] : [r.reply]));
  }

  stop(): void {
    this.offLeft();
    this.own.setLeaderHooks(undefined);
    for (const id of [...this.pending.keys()]) this.fail(id, new Error('the leader stopped'));
  }

  private onReply(from: string, body: LayerBody): void {
    const p = this.pending.get(body.id as number);
    if (!p || p.node !== from) return;
    this.pending.delete(body.id as number);
    if (body.ok) p.resolve(body.value);
    else p.reject(new Error(`${from}: ${String(body.error)}`));
  }

  private fail(id: number, err: Error): void {
    const p = this.pending.get(id);
    this.pending.delete(id);
    p?.reject(err);
  }
}
