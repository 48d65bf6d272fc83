import type { NodeSpec, ProvisionedNode, ProviderEvent, ProvisionState } from './node-provider.js';

/**
 * The nodes a provider has started, as a state machine apart from I/O (see node-provider.ts for the
 * states). Inputs are calls with the current time: what was asked (provision, release), what the
 * driver did (launched, launchFailed, ended), what the cluster shows (seen) and the clock (tick).
 * Each returns instructions as data — start a node, stop one (gracefully or by force), report an
 * event — which the Provisioner carries out. Tested under simulated time.
 *
 * Timeouts:
 * - a node not joined `startTimeoutMs` after it was requested fails, and is killed;
 * - a node not gone `releaseTimeoutMs` after it was asked to drain is killed, and one still not gone
 *   `killTimeoutMs` after that fails ("would not stop").
 * Failures to start are counted: after k consecutive ones, no new node may start for
 * min(retryBaseMs · 2^(k−1), retryMaxMs) (`startAllowedAt`); a node that joins resets the count.
 */
export interface NodePoolOptions {
  /** Ids are `${idPrefix}-${n}`. */
  idPrefix: string;
  startTimeoutMs?: number;
  releaseTimeoutMs?: number;
  killTimeoutMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Released and failed nodes kept for reports (default 100; the oldest go first). */
  history?: number;
}

export type PoolInstruction =
  | { type: 'start'; id: string; spec: NodeSpec }
  | { type: 'stop'; id: string; force: boolean }
  | { type: 'report'; event: ProviderEvent };

interface Entry extends ProvisionedNode {
  spec: NodeSpec;
  /** When the current state times out (requested, starting, releasing). */
  deadline?: number;
  /** Launched (the driver has a process to stop). */
  launched: boolean;
  /** A release was asked while it was still requested: stop it once launched. */
  stopWhenLaunched: boolean;
  /** Killed after its release timed out. */
  forced: boolean;
}

const ACTIVE: ReadonlySet<ProvisionState> = new Set(['requested', 'starting', 'joined', 'releasing']);

export class NodePool {
  private readonly entries = new Map<string, Entry>();
  private counter = 0;
  private failures = 0;
  private lastFailureAt = -Infinity;
  private readonly o: Required<NodePoolOptions>;

  constructor(opts: NodePoolOptions) {
    this.o = {
      startTimeoutMs: 120_000, releaseTimeoutMs: 60_000, killTimeoutMs: 15_000, retryBaseMs: 1_000, retryMaxMs: 60_000, history: 100,
      ...opts,
    };
  }

  /** Every node, in the order they were requested. */
  nodes(): ProvisionedNode[] {
    return [...this.entries.values()].map(({ id, state, since, where, error, idleSince }) => ({
      id, state, since, ...(where !== undefined ? { where } : {}), ...(error !== undefined ? { error } : {}), ...(idleSince !== undefined ? { idleSince } : {}),
    }));
  }

  /** Nodes that hold (or will hold) a machine: requested, starting, joined or releasing. */
  active(): ProvisionedNode[] {
    return this.nodes().filter((n) => ACTIVE.has(n.state));
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** When a new node may be started (after consecutive start failures: a backoff). */
  startAllowedAt(): number {
    if (this.failures === 0) return -Infinity;
    return this.lastFailureAt + Math.min(this.o.retryBaseMs * 2 ** (this.failures - 1), this.o.retryMaxMs);
  }

  /** Consecutive start failures (reset when a node joins). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  provision(count: number, spec: NodeSpec, now: number): { nodes: ProvisionedNode[]; instructions: PoolInstruction[] } {
    if (!Number.isInteger(count) || count < 0) throw new Error(`provision: count must be a whole number ≥ 0, got ${count}`);
    const out: PoolInstruction[] = [];
    const made: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `${this.o.idPrefix}-${++this.counter}`;
      this.entries.set(id, { id, state: 'requested', since: now, spec, deadline: now + this.o.startTimeoutMs, launched: false, stopWhenLaunched: false, forced: false });
      made.push(id);
      out.push({ type: 'start', id, spec }, report(id, 'requested'));
    }
    this.trim();
    return { nodes: this.nodes().filter((n) => made.includes(n.id)), instructions: out };
  }

  /** Drains and stops the given nodes (unknown ids and nodes already leaving are ignored). */
  release(ids: readonly string[], now: number): PoolInstruction[] {
    const out: PoolInstruction[] = [];
    for (const id of ids) {
      const e = this.entries.get(id);
      if (!e || (e.state !== 'requested' && e.state !== 'starting' && e.state !== 'joined')) continue;
      const launched = e.launched;
      this.move(e, 'releasing', now, out, now + this.o.releaseTimeoutMs);
      if (launched) out.push({ type: 'stop', id, force: false });
      else e.stopWhenLaunched = true;
    }
    return out;
  }

  /** The driver launched the node. */
  launched(id: string, where: string, now: number): PoolInstruction[] {
    const e = this.entries.get(id);
    if (!e) return [];
    e.launched = true;
    e.where = where;
    const out: PoolInstruction[] = [];
    if (e.state === 'requested') this.move(e, 'starting', now, out, e.deadline);
    else if (e.stopWhenLaunched || e.state === 'failed') out.push({ type: 'stop', id, force: e.state === 'failed' });
    return out;
  }

  /** The driver could not launch the node. */
  launchFailed(id: string, error: string, now: number): PoolInstruction[] {
    const e = this.entries.get(id);
    if (!e || !ACTIVE.has(e.state)) return [];
    const out: PoolInstruction[] = [];
    if (e.state === 'releasing') this.move(e, 'released', now, out);
    else this.fail(e, `could not be started: ${error}`, now, out);
    return out;
  }

  /** The node's process (session, allocation) ended. */
  ended(id: string, how: string, now: number): PoolInstruction[] {
    const e = this.entries.get(id);
    if (!e) return [];
    const out: PoolInstruction[] = [];
    e.launched = false;
    if (e.state === 'releasing') this.move(e, 'released', now, out);
    else if (e.state === 'requested' || e.state === 'starting') this.fail(e, `ended before it joined the cluster (${how})`, now, out);
    else if (e.state === 'joined') this.fail(e, `ended on its own (${how})`, now, out, false);
    return out;
  }

  /**
   * What the cluster shows: its live nodes with their assignments ('' = idle). A node of this pool
   * that appears joins; one that stays idle is idle since the first time it was seen so.
   */
  seen(members: ReadonlyArray<{ id: string; assignment: string }>, now: number): PoolInstruction[] {
    const out: PoolInstruction[] = [];
    const present = new Map(members.map((m) => [m.id, m.assignment]));
    for (const e of this.entries.values()) {
      const assignment = present.get(e.id);
      if (assignment !== undefined && (e.state === 'requested' || e.state === 'starting')) {
        this.move(e, 'joined', now, out);
        this.failures = 0;
      }
      if (e.state !== 'joined' || assignment === undefined || assignment !== '') delete e.idleSince;
      else e.idleSince ??= now;
    }
    return out;
  }

  /** Timeouts due at `now`. */
  tick(now: number): PoolInstruction[] {
    const out: PoolInstruction[] = [];
    for (const e of this.entries.values()) {
      if (e.deadline === undefined || e.deadline > now) continue;
      if (e.state === 'requested' || e.state === 'starting') {
        const seconds = Math.round(this.o.startTimeoutMs / 1000);
        this.fail(e, `did not join the cluster within ${seconds} s${e.where ? ` (${e.where})` : ''}`, now, out);
        if (e.launched) out.push({ type: 'stop', id: e.id, force: true });
      } else if (e.state === 'releasing' && !e.forced) {
        e.forced = true;
        e.deadline = now + this.o.killTimeoutMs;
        if (e.launched) out.push({ type: 'stop', id: e.id, force: true });
      } else if (e.state === 'releasing') {
        this.fail(e, `would not stop: still running ${Math.round((this.o.releaseTimeoutMs + this.o.killTimeoutMs) / 1000)} s after it was released${e.where ? ` (${e.where})` : ''}`, now, out, false);
      }
    }
    return out;
  }

  /** The earliest pending timeout (undefined: none). */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const e of this.entries.values()) if (e.deadline !== undefined && (next === undefined || e.deadline < next)) next = e.deadline;
    return next;
  }

  private move(e: Entry, state: ProvisionState, now: number, out: PoolInstruction[], deadline?: number): void {
    e.state = state;
    e.since = now;
    if (deadline === undefined) delete e.deadline;
    else e.deadline = deadline;
    if (state !== 'joined') delete e.idleSince;
    out.push(report(e.id, state, e.where));
  }

  /** Marks a node failed; a failure to start counts towards the backoff. */
  private fail(e: Entry, error: string, now: number, out: PoolInstruction[], startFailure = true): void {
    e.error = error;
    this.move(e, 'failed', now, out);
    out[out.length - 1] = report(e.id, 'failed', e.where, error);
    if (!startFailure) return;
    this.failures++;
    this.lastFailureAt = now;
    out.push({ type: 'report', event: { type: 'retry', after: this.startAllowedAt(), failures: this.failures } });
  }

  /** Forgets the oldest released and failed nodes beyond the history's size. */
  private trim(): void {
    const done = [...this.entries.values()].filter((e) => !ACTIVE.has(e.state));
    for (const e of done.slice(0, Math.max(0, done.length - this.o.history))) this.entries.delete(e.id);
  }
}

function report(node: string, state: ProvisionState, where?: string, error?: string): PoolInstruction {
  return { type: 'report', event: { type: 'state', node, state, ...(where !== undefined ? { where } : {}), ...(error !== undefined ? { error } : {}) } };
}
