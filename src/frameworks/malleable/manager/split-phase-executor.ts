import type { JobDecision } from './job-decisions.js';

/** What happened, when (ms on the injected clock): the manager's log of actions and the figures' source. */
export interface ExecutorEvent {
  at: number;
  type: 'launch' | 'expand' | 'shrink-sent' | 'shrink-acked' | 'deferred' | 'dropped' | 'finished' | 'node-lost';
  job: string;
  /** The job's nodes after the event (for 'deferred': the decision's nodes). */
  nodes: string[];
}

/**
 * Split-phase execution of scheduling decisions (seed Algorithm 1) as a state machine apart from
 * I/O: it is told decisions, acknowledgements, finished jobs and lost nodes, and answers with the
 * actions to perform now. The caller performs them (sends the shrink request, launches the job,
 * sends the expand request) and reports back.
 *
 * Two node → job maps: `sched` is the scheduler's view, changed as soon as a decision is made;
 * `actual` is what jobs really hold, changed when a launch or expand is performed and when a shrink
 * is acknowledged. Shrink requests go out at once; a launch or expand whose nodes are not all free
 * in `actual` waits (it is "dependent") and runs as soon as the acknowledgements free them;
 * independent decisions run at once. A node is handed to a job only when it is free in `actual`,
 * so no node is ever held by two jobs.
 */
export class SplitPhaseExecutor {
  private readonly actual = new Map<string, string>();
  private readonly sched = new Map<string, string>();
  private readonly dependent: JobDecision[] = [];
  private readonly shrinking = new Map<string, { decision: Extract<JobDecision, { type: 'shrink' }>; sentAt: number }>();
  private readonly changedAt = new Map<string, number>();
  private readonly unacknowledged = new Set<string>();
  readonly events: ExecutorEvent[] = [];

  /** `holding`: what jobs hold already (a restarted manager starts from the assignments it finds). */
  constructor(private readonly clock: () => number, holding: Iterable<readonly [string, string]> = []) {
    for (const [node, job] of holding) {
      if (job === '') continue;
      this.actual.set(node, job);
      this.sched.set(node, job);
    }
  }

  /** node → job as the scheduler planned it. */
  schedMap(): ReadonlyMap<string, string> {
    return this.sched;
  }

  /** node → job as the jobs hold them. */
  actualMap(): ReadonlyMap<string, string> {
    return this.actual;
  }

  /** A shrink of the job is awaiting its acknowledgement, a launch/expand is waiting for nodes, or a request to it is unacknowledged. */
  isBusy(job: string): boolean {
    return this.shrinking.has(job) || this.unacknowledged.has(job) || this.dependent.some((d) => d.job === job);
  }

  /**
   * The caller told the job about a launch or expand and awaits its acknowledgement: nothing new is
   * planned for the job until `requestAcknowledged`, so a later shrink is never overtaken by it.
   */
  requestSent(job: string): void {
    this.unacknowledged.add(job);
  }

  requestAcknowledged(job: string): void {
    this.unacknowledged.delete(job);
  }

  /** When the job was last launched, shrunk or expanded (decided or acknowledged), if ever here. */
  lastChangeAt(job: string): number | undefined {
    return this.changedAt.get(job);
  }

  /** A restarted manager's memory of when a job last changed (from the job's recorded events). */
  restoreChange(job: string, at: number): void {
    this.changedAt.set(job, at);
  }

  /** Decisions waiting for nodes (for status displays). */
  waiting(): readonly JobDecision[] {
    return this.dependent;
  }

  /** The shrinks awaiting acknowledgement, by job. */
  inFlight(): ReadonlyMap<string, { decision: Extract<JobDecision, { type: 'shrink' }>; sentAt: number }> {
    return this.shrinking;
  }

  /** UpdateSchedNodeMap + ExecuteDecisions: returns what to perform now (shrinks to send, launches and expands to do). */
  execute(decisions: readonly JobDecision[]): JobDecision[] {
    const now = this.clock();
    for (const d of decisions) {
      if (this.isBusy(d.job)) throw new Error(`job ${d.job} already has an action under way; plan nothing new for it`);
      this.changedAt.set(d.job, now);
      if (d.type === 'shrink') for (const n of d.removed) this.sched.delete(n);
      else for (const n of added(d)) {
        const holder = this.sched.get(n);
        if (holder !== undefined && holder !== d.job) throw new Error(`node ${n} is planned for job ${holder}; it cannot also go to ${d.job}`);
        this.sched.set(n, d.job);
      }
    }
    const now1: JobDecision[] = [];
    for (const d of decisions) {
      if (d.type === 'shrink') {
        this.shrinking.set(d.job, { decision: d, sentAt: now });
        this.events.push({ at: now, type: 'shrink-sent', job: d.job, nodes: d.nodes });
        now1.push(d);
      } else if (this.allFree(d)) now1.push(this.perform(d, now));
      else {
        this.dependent.push(d);
        this.events.push({ at: now, type: 'deferred', job: d.job, nodes: d.nodes });
      }
    }
    return now1;
  }

  /**
   * ProcessBufferedShrinkAck + ExecuteDependentDecisions. `nodes` is what the job reports it holds
   * now; nodes it still holds though the shrink released them stay its own (decisions waiting for
   * them are dropped, to be planned again).
   */
  shrinkAcknowledged(job: string, nodes: readonly string[]): JobDecision[] {
    const pending = this.shrinking.get(job);
    if (!pending) return [];
    this.shrinking.delete(job);
    const now = this.clock();
    this.changedAt.set(job, now);
    const kept = new Set(nodes);
    for (const [n, j] of [...this.actual]) if (j === job && !kept.has(n)) this.actual.delete(n);
    for (const n of pending.decision.removed) if (kept.has(n)) this.reclaim(n, job, now);
    this.events.push({ at: now, type: 'shrink-acked', job, nodes: this.nodesOf(this.actual, job) });
    return this.runDependent(now);
  }

  /** A job ended: its nodes are free in both maps, its pending actions are void. */
  jobFinished(job: string): JobDecision[] {
    const now = this.clock();
    for (const map of [this.actual, this.sched]) for (const [n, j] of [...map]) if (j === job) map.delete(n);
    this.shrinking.delete(job);
    this.unacknowledged.delete(job);
    for (const d of this.dependent.filter((x) => x.job === job)) this.dependent.splice(this.dependent.indexOf(d), 1);
    this.events.push({ at: now, type: 'finished', job, nodes: [] });
    return this.runDependent(now);
  }

  /** A node died or left the pool: no job holds it; a decision waiting for it is dropped. */
  nodeLost(node: string): JobDecision[] {
    const now = this.clock();
    const job = this.actual.get(node) ?? this.sched.get(node);
    this.actual.delete(node);
    this.sched.delete(node);
    for (const d of this.dependent.filter((x) => added(x).includes(node))) this.drop(d, now);
    if (job !== undefined) this.events.push({ at: now, type: 'node-lost', job, nodes: this.nodesOf(this.actual, job) });
    return this.runDependent(now);
  }

  private runDependent(now: number): JobDecision[] {
    const ready: JobDecision[] = [];
    for (const d of [...this.dependent]) {
      if (!this.allFree(d)) continue;
      this.dependent.splice(this.dependent.indexOf(d), 1);
      ready.push(this.perform(d, now));
    }
    return ready;
  }

  /** AreAllNodesFree: every node the decision adds is free in the actual map (or the job's already). */
  private allFree(d: JobDecision): boolean {
    return added(d).every((n) => (this.actual.get(n) ?? d.job) === d.job);
  }

  /** LaunchExpandJob + UpdateActualNodeMap. */
  private perform(d: JobDecision, now: number): JobDecision {
    for (const n of added(d)) this.actual.set(n, d.job);
    this.changedAt.set(d.job, now);
    this.events.push({ at: now, type: d.type === 'launch' ? 'launch' : 'expand', job: d.job, nodes: this.nodesOf(this.actual, d.job) });
    return d;
  }

  /** The job kept node `n` after all: it is the job's in the plan again; whoever waited for it is re-planned. */
  private reclaim(n: string, job: string, now: number): void {
    this.actual.set(n, job);
    for (const d of this.dependent.filter((x) => added(x).includes(n))) this.drop(d, now);
    this.sched.set(n, job);
  }

  /** Withdraws a waiting decision: its nodes leave the job in the scheduler's view. */
  private drop(d: JobDecision, now: number): void {
    this.dependent.splice(this.dependent.indexOf(d), 1);
    for (const n of added(d)) if (this.sched.get(n) === d.job) this.sched.delete(n);
    this.events.push({ at: now, type: 'dropped', job: d.job, nodes: d.nodes });
  }

  private nodesOf(map: ReadonlyMap<string, string>, job: string): string[] {
    return [...map].filter(([, j]) => j === job).map(([n]) => n).sort();
  }
}

/** The nodes a decision gives to its job (none for a shrink). */
export function added(d: JobDecision): string[] {
  return d.type === 'launch' ? d.nodes : d.type === 'expand' ? d.added : [];
}
