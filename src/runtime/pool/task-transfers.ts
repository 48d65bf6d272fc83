/**
 * The transfer protocol of the task pool: how a task changes hands between two nodes of a job
 * (a steal answer, a migration on drain, a placement on a chosen node).
 *
 * offer → the receiver claims the record in the ledger at the offered version → offer-ack
 * (a receiver with an idle worker starts the task meanwhile; what the run reports waits for the claim)
 * - claimed: the receiver owns the task; the sender forgets it;
 * - refused, undeliverable, unanswered past the deadline, or the receiver left: the sender takes it
 *   back by claiming the record at the version it handed out — which fences a late claim by the
 *   receiver; if the receiver claimed first, the task is the receiver's (and recovered from it if it
 *   is gone). Either way it ends up with exactly one of the two.
 */
import type { Log } from '../../util/log.js';
import type { Clock } from '../../util/clock.js';
import type { Ledger } from './ledger.js';
import type { RuntimeMessage } from './pool-messages.js';
import type { TaskSnapshot } from './task-snapshot.js';

export type TransferKind = 'steal' | 'migration' | 'placement';

interface Outgoing {
  snapshot: TaskSnapshot;
  to: string;
  requestId: number | undefined;
  kind: TransferKind;
  /** After this time the offer is taken back (a lost offer or answer must not strand the task). */
  deadline: number;
}

/** What the transfers need of their job runner. */
export interface TransferHost {
  readonly nodeId: string;
  readonly jobId: string;
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly offerTimeoutMs: number;
  send(to: string, message: RuntimeMessage): Promise<void>;
  /** Whether this node takes tasks now (not draining or stopped). */
  accepting(): boolean;
  /** A task this node owns now: run it or queue it. */
  place(snapshot: TaskSnapshot): void;
  /**
   * Starts an offered task on an idle worker before the claim settles, its reports held until then
   * (see EarlyStarts); false if no worker is idle (optional: without it every task waits for its claim).
   */
  startEarly?(snapshot: TaskSnapshot): boolean;
  /** The claim on a task started early settled: hand on its held reports, or stop and drop the run. */
  claimSettled?(taskId: string, claimed: boolean): void;
  schedule(): void;
  /** Wakes the runner after `ms`. */
  arm(ms: number): void;
  /** Counts a ledger write whose outcome decides where a task goes (+1 before, -1 after). */
  inFlight(delta: 1 | -1): void;
  /** A hand-over completed (sender side) or a task arrived (receiver side). */
  handedOver(kind: TransferKind, to: string, taskId: string): void;
  received(kind: 'steal' | 'migration', taskId: string): void;
  /** The answer to this node's steal request `requestId` arrived (claimed or not). */
  stealAnswered(requestId: number, claimed: boolean): void;
  /** Logging with the job's and node's ids. */
  readonly log: Log;
}

export class TaskTransfers {
  private readonly outgoing = new Map<string, Outgoing>();

  constructor(private readonly h: TransferHost) {}

  /** Tasks offered and not yet answered. */
  get size(): number {
    return this.outgoing.size;
  }

  /** Offers a task of this node to `to`. */
  offer(pooled: TaskSnapshot, to: string, requestId: number | undefined, kind: TransferKind): void {
    // A large state travels as the reference its ledger record holds; the receiver obtains the bytes.
    const ref = this.h.ledger.refOf(pooled.id);
    const snapshot: TaskSnapshot = { id: pooled.id, state: pooled.state, partial: pooled.partial, version: pooled.version, ...(ref ? { ref } : {}) };
    this.outgoing.set(snapshot.id, { snapshot, to, requestId, kind, deadline: this.h.clock.now() + this.h.offerTimeoutMs });
    this.h.arm(this.h.offerTimeoutMs);
    const task: TaskSnapshot = ref ? { id: snapshot.id, state: null, partial: null, version: snapshot.version, ref } : snapshot;
    const msg: RuntimeMessage = requestId === undefined
      ? { type: 'offer', job: this.h.jobId, task }
      : { type: 'offer', job: this.h.jobId, requestId, task };
    this.h.send(to, msg).catch(() => void this.takeBack(snapshot.id));
  }

  /** The receiver's answer to an offer: it owns the task now, or we take it back. */
  async onAck(from: string, taskId: string, claimed: boolean): Promise<void> {
    const out = this.outgoing.get(taskId);
    if (!out || out.to !== from) return;
    if (!claimed) return this.takeBack(taskId);
    this.outgoing.delete(taskId);
    this.h.ledger.release(taskId, out.snapshot.version);
    this.h.handedOver(out.kind, from, taskId);
    this.h.schedule();
  }

  /** Another member left: take back what was offered to it. */
  peerLeft(nodeId: string): void {
    for (const [id, out] of this.outgoing) if (out.to === nodeId) void this.takeBack(id);
  }

  /** Offers unanswered past their deadline are taken back (the claim decides who owns them). */
  expire(now: number): void {
    for (const [id, out] of this.outgoing) {
      if (out.deadline <= now) void this.takeBack(id);
      else this.h.arm(out.deadline - now);
    }
  }

  /**
   * The receiving side of an offer: claim the task in the ledger, answer, and run it — started at once
   * where a worker is idle (its reports wait for the claim), else placed once claimed.
   */
  async receive(from: string, snapshot: TaskSnapshot, requestId: number | undefined): Promise<void> {
    const answer = (claimed: boolean) => this.h.send(from, { type: 'offer-ack', job: this.h.jobId, taskId: snapshot.id, claimed })
      .catch((err: unknown) => this.h.log.child({ task: snapshot.id }).debug('runtime', `could not answer the offer of ${snapshot.id} to ${from}`, err));
    if (!this.h.accepting()) {
      if (requestId !== undefined) this.h.stealAnswered(requestId, false);
      return answer(false);
    }
    this.h.inFlight(1);
    let claimed = false;
    // A referenced state is not here yet: that task waits for its bytes and its claim.
    const early = !snapshot.ref && (this.h.startEarly?.({ ...snapshot, version: snapshot.version + 1 }) ?? false);
    try {
      // A referenced state is obtained before the claim: a task whose bytes cannot be had stays with the sender.
      if (snapshot.ref) snapshot = { ...snapshot, ...(await this.h.ledger.load(snapshot.ref, snapshot.id)) };
      claimed = await this.h.ledger.claim(snapshot);
    } catch (err) {
      this.h.log.child({ task: snapshot.id }).warn('runtime', `claiming task ${snapshot.id} failed`, err);
    }
    this.h.inFlight(-1);
    if (early) this.h.claimSettled!(snapshot.id, claimed);
    await answer(claimed);
    if (requestId !== undefined) this.h.stealAnswered(requestId, claimed);
    if (claimed) {
      this.h.received(requestId !== undefined ? 'steal' : 'migration', snapshot.id);
      if (!early) this.h.place({ ...snapshot, version: snapshot.version + 1 });
    }
    this.h.schedule();
  }

  /**
   * An offer failed (not delivered, refused, or the receiver left). Re-claiming the record at the
   * version we handed out fences any late claim by the receiver; if the receiver claimed first,
   * the task is theirs.
   */
  private async takeBack(taskId: string): Promise<void> {
    const out = this.outgoing.get(taskId);
    if (!out) return;
    this.outgoing.delete(taskId);
    this.h.inFlight(1);
    try {
      const mine = await this.h.ledger.claim(out.snapshot);
      if (mine) this.h.place({ ...out.snapshot, version: out.snapshot.version + 1 });
    } catch (err) {
      this.h.log.child({ task: taskId }).warn('runtime', `could not take back task ${taskId}`, err);
    } finally {
      this.h.inFlight(-1);
      this.h.schedule();
    }
  }
}
