import type { Rng } from '../../util/rng.js';

export type StealAction =
  | { kind: 'send'; victim: string; requestId: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'none' };

export interface StealPlannerOptions {
  /** First backoff after an empty answer (ms). */
  minBackoffMs?: number;
  /** Backoff cap (ms): an idle node asks at most this rarely, so a join is noticed quickly. */
  maxBackoffMs?: number;
  /** How long to wait for an answer before giving up on a victim (ms). */
  requestTimeoutMs?: number;
}

/**
 * The thief side of randomized work stealing (seed 000 §3.3), as a state machine with no I/O:
 * the node tells it whether work is needed and who the live members are; it answers whom to ask
 * or how long to wait. One request is outstanding at a time; empty answers back off
 * exponentially (with jitter), a successful steal resets the backoff.
 */
export class StealPlanner {
  private readonly minBackoff: number;
  private readonly maxBackoff: number;
  readonly requestTimeoutMs: number;
  private backoff = 0;
  private notBefore = 0;
  private outstanding: { id: number; victim: string; sentAt: number } | undefined;
  private nextId = 1;
  private lastVictim: string | undefined;
  readonly stats = { requests: 0, successes: 0, empty: 0, timeouts: 0 };

  constructor(private readonly rng: Rng, opts: StealPlannerOptions = {}) {
    this.minBackoff = opts.minBackoffMs ?? 1;
    this.maxBackoff = opts.maxBackoffMs ?? 50;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 2_000;
  }

  /** Whether a request is outstanding (then `next` has a timeout to watch even when no work is needed). */
  get asking(): boolean {
    return this.outstanding !== undefined;
  }

  /** What to do now. `victims` are the other live members of the job. */
  next(now: number, needWork: boolean, victims: readonly string[]): StealAction {
    if (this.outstanding) {
      const age = now - this.outstanding.sentAt;
      if (age < this.requestTimeoutMs) return { kind: 'wait', ms: this.requestTimeoutMs - age };
      this.stats.timeouts++;
      this.failed(now);
    }
    if (!needWork || victims.length === 0) return { kind: 'none' };
    if (now < this.notBefore) return { kind: 'wait', ms: this.notBefore - now };
    // Random victim, avoiding the one that just said no when there is a choice.
    const choices = victims.length > 1 && this.lastVictim ? victims.filter((v) => v !== this.lastVictim) : victims;
    const victim = this.rng.pick(choices);
    const requestId = this.nextId++;
    this.outstanding = { id: requestId, victim, sentAt: now };
    this.stats.requests++;
    return { kind: 'send', victim, requestId };
  }

  /** The answer to `requestId` arrived: with a task or empty. Stale answers are ignored. Returns how long the answer took (ms; undefined if stale). */
  answered(requestId: number, gotTask: boolean, now: number): number | undefined {
    if (this.outstanding?.id !== requestId) return undefined;
    const took = now - this.outstanding.sentAt;
    if (gotTask) {
      this.stats.successes++;
      this.outstanding = undefined;
      this.backoff = 0;
      this.notBefore = now;
      this.lastVictim = undefined;
    } else {
      this.stats.empty++;
      this.failed(now);
    }
    return took;
  }

  /** The request could not be delivered (peer gone): try someone else soon. */
  undeliverable(requestId: number, now: number): void {
    if (this.outstanding?.id === requestId) this.failed(now);
  }

  /** A member left: a request to it will never be answered. */
  memberLeft(nodeId: string, now: number): void {
    if (this.outstanding?.victim === nodeId) this.failed(now);
  }

  /** New members: ask again soon (a joining node is worth asking at once). */
  membersJoined(now: number): void {
    this.backoff = 0;
    this.notBefore = now;
  }

  get waitingFor(): number | undefined {
    return this.outstanding?.id;
  }

  private failed(now: number): void {
    this.lastVictim = this.outstanding?.victim;
    this.outstanding = undefined;
    this.backoff = this.backoff === 0 ? this.minBackoff : Math.min(this.maxBackoff, this.backoff * 2);
    this.notBefore = now + this.backoff * (0.5 + this.rng.next());
  }
}
