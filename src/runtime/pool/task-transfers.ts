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
 *
 * In the task table (pool-tasks.ts) the sender's task is `offered` until the answer, then gone or
 * `claiming` (taken back); the receiver's is `claiming`, or `early` when it started at once.
 */
import type { Log } from '../../util/log.js';
import type { Clock } from '../../util/clock.js';
import type { Ledger } from './ledger.js';
import type { RuntimeMessage } from './pool-messages.js';
import { PoolTask, type PoolTasks, type TransferKind } from './pool-tasks.js';
import type { TaskSnapshot } from './task-snapshot.js';

export type { TransferKind };

/** What the transfers need of their job runner. */
export interface TransferHost {
  readonly nodeId: string;
  readonly jobId: string;
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly offerTimeoutMs: number;
  /** The node's task table. */
  readonly tasks: PoolTasks;
  send(to: string, message: RuntimeMessage): Promise<void>;
  /** Whether this node takes tasks now (not draining or stopped). */
  accepting(): boolean;
  /** Why this node takes no more tasks now although it is accepting (its pool memory budget), or undefined (optional). */
  overBudget?(): string | undefined;
  /** A task this node owns now: run it or queue it. */
  place(task: PoolTask, snapshot: TaskSnapshot): void;
  /**
   * Starts an offered task on an idle worker before the claim settles (state `early`), its reports held
   * until then; false if no worker is idle (optional: without it every task waits for its claim).
   */
  startEarly?(task: PoolTask, snapshot: TaskSnapshot): boolean;
  /** The claim on a task started early settled: hand on its held reports, or stop and drop the run. */
  claimSettled?(task: PoolTask, claimed: boolean): void;
  schedule(): void;
  /** Wakes the runner after `ms`. */
  arm(ms: number): void;
  /** A hand-over completed (sender side) or a task arrived (receiver side). */
  handedOver(kind: TransferKind, to: string, taskId: string): void;
  received(kind: 'steal' | 'migration', taskId: string): void;
  /** The answer to this node's steal request `requestId` arrived (claimed or not). */
  stealAnswered(requestId: number, claimed: boolean): void;
  /** Logging with the job's and node's ids. */
  readonly log: Log;
}

export class TaskTransfers {
  constructor(private readonly h: TransferHost) {}

  /** Offers a task of this node (`snapshot`: as it holds it) to `to`. */
  offer(task: PoolTask, snapshot: TaskSnapshot, to: string, requestId: number | undefined, kind: TransferKind): void {
    // A large state travels as the reference its ledger record holds; the receiver obtains the bytes.
    const ref = this.h.ledger.refOf(snapshot.id);
    const handedOut: TaskSnapshot = { id: snapshot.id, state: snapshot.state, partial: snapshot.partial, version: snapshot.version, ...(ref ? { ref } : {}) };
    task.snapshot = snapshot;
    task.offer = { to, requestId, kind, deadline: this.h.clock.now() + this.h.offerTimeoutMs, handedOut };
    this.h.tasks.move(task, 'offered');
    this.h.arm(this.h.offerTimeoutMs);
    const sent: TaskSnapshot = ref ? { id: snapshot.id, state: null, partial: null, version: snapshot.version, ref } : handedOut;
    const msg: RuntimeMessage = requestId === undefined
      ? { type: 'offer', job: this.h.jobId, task: sent }
      : { type: 'offer', job: this.h.jobId, requestId, task: sent };
    this.h.send(to, msg).catch(() => void this.takeBack(task));
  }

  /** The receiver's answer to an offer: it owns the task now, or we take it back. */
  async onAck(from: string, taskId: string, claimed: boolean): Promise<void> {
    const task = this.h.tasks.get(taskId);
    const offer = task?.state === 'offered' ? task.offer! : undefined;
    if (!task || !offer || offer.to !== from) return;
    if (!claimed) return this.takeBack(task);
    this.h.tasks.move(task, 'gone');
    this.h.ledger.release(taskId, offer.handedOut.version);
    this.h.handedOver(offer.kind, from, taskId);
    this.h.schedule();
  }

  /** Another member left: take back what was offered to it. */
  peerLeft(nodeId: string): void {
    for (const task of this.h.tasks.inState('offered')) if (task.offer!.to === nodeId) void this.takeBack(task);
  }

  /** Offers unanswered past their deadline are taken back (the claim decides who owns them). */
  expire(now: number): void {
    if (this.h.tasks.count('offered') === 0) return;
    for (const task of this.h.tasks.inState('offered')) {
      const deadline = task.offer!.deadline;
      if (deadline <= now) void this.takeBack(task);
      else this.h.arm(deadline - now);
    }
  }

  /**
   * The receiving side of an offer: claim the task in the ledger, answer, and run it — started at once
   * where a worker is idle (its reports wait for the claim), else placed once claimed.
   */
  async receive(from: string, offered: TaskSnapshot, requestId: number | undefined): Promise<void> {
    let snapshot = offered;
    const answer = (claimed: boolean) => this.h.send(from, { type: 'offer-ack', job: this.h.jobId, taskId: snapshot.id, claimed })
      .catch((err: unknown) => this.h.log.child({ task: snapshot.id }).debug('runtime', `could not answer the offer of ${snapshot.id} to ${from}`, err));
    const held = this.h.tasks.get(snapshot.id);
    const overBudget = held ? undefined : this.h.overBudget?.();
    if (!this.h.accepting() || held || overBudget) {
      if (held) this.h.log.child({ task: snapshot.id }).debug('runtime', `refused an offer of task ${snapshot.id}, which this node holds (${held.state})`);
      // The sender keeps it (it takes it back on the refusal): nothing is lost.
      if (overBudget) this.h.log.child({ task: snapshot.id }).info('runtime', `refused an offer of task ${snapshot.id} from ${from}: ${overBudget}`);
      if (requestId !== undefined) this.h.stealAnswered(requestId, false);
      return answer(false);
    }
    const task = new PoolTask(snapshot.id);
    // A referenced state is not here yet: that task waits for its bytes and its claim.
    const early = !snapshot.ref && (this.h.startEarly?.(task, { ...snapshot, version: snapshot.version + 1 }) ?? false);
    if (!early) {
      task.snapshot = snapshot;
      this.h.tasks.move(task, 'claiming');
    }
    let claimed = false;
    try {
      // A referenced state is obtained before the claim: a task whose bytes cannot be had stays with the sender.
      if (snapshot.ref) task.snapshot = snapshot = { ...snapshot, ...(await this.h.ledger.load(snapshot.ref, snapshot.id)) };
      claimed = await this.h.ledger.claim(snapshot);
    } catch (err) {
      this.h.log.child({ task: snapshot.id }).warn('runtime', `claiming task ${snapshot.id} failed`, err);
    }
    if (early) this.h.claimSettled!(task, claimed);
    await answer(claimed);
    if (requestId !== undefined) this.h.stealAnswered(requestId, claimed);
    if (claimed) this.h.received(requestId !== undefined ? 'steal' : 'migration', snapshot.id);
    if (!early) {
      if (claimed) this.h.place(task, { ...snapshot, version: snapshot.version + 1 });
      else this.h.tasks.move(task, 'gone');
    }
    this.h.schedule();
  }

  /**
   * An offer failed (not delivered, refused, or the receiver left). Re-claiming the record at the
   * version we handed out fences any late claim by the receiver; if the receiver claimed first,
   * the task is theirs.
   */
  private async takeBack(task: PoolTask): Promise<void> {
    if (task.state !== 'offered') return;
    const handedOut = task.offer!.handedOut;
    task.snapshot = handedOut;
    this.h.tasks.move(task, 'claiming');
    let mine = false;
    try {
      mine = await this.h.ledger.claim(handedOut);
    } catch (err) {
      this.h.log.child({ task: task.id }).warn('runtime', `could not take back task ${task.id}`, err);
    }
    if (mine) this.h.place(task, { ...handedOut, version: handedOut.version + 1 });
    else this.h.tasks.move(task, 'gone');
    this.h.schedule();
  }
}
