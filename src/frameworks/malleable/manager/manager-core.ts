import type { SchedulingPolicy } from '../../../runtime/scheduler/index.js';
import { decideJobs, type JobDecision } from './job-decisions.js';
import type { Flexibility, ManagedJob, ManagedView } from './managed-job.js';
import { jobGapMs, RescaleCosts, type RescaleCostOptions } from './rescale-cost.js';
import { SplitPhaseExecutor } from './split-phase-executor.js';

/** A job in the manager's queue, as stored with its spec. */
export interface QueuedJob {
  id: string;
  createdAt: number;
  flexibility: Flexibility;
  /** Requested size: a rigid job's size; the start size of others when a policy asks for it. */
  nodes: number;
  minNodes: number;
  maxNodes: number;
  finished: boolean;
  /** The job has had nodes before (so it is not gated by its minimum again). */
  started?: boolean;
  /** An operator's size holds (minNodes = maxNodes = it) until the operator releases it. */
  pinned?: boolean;
}

/**
 * Algorithm 1's loop body without I/O: at each scheduling event (an arrival, a finished job, an
 * acknowledgement, a T_gap expiring) the policy decides on the scheduler's view and the split-phase
 * executor says what to perform now. Used by the resource manager service over ZooKeeper and by
 * the workload simulation, so both run the same decisions.
 */
export class ManagerCore {
  readonly executor: SplitPhaseExecutor;
  /** The jobs' measured T_rescale: what the policy weighs a rescale against. */
  readonly costs = new RescaleCosts();
  private readonly launched = new Set<string>();

  constructor(private readonly policy: SchedulingPolicy<ManagedView>, private readonly clock: () => number, holding: Iterable<readonly [string, string]> = []) {
    this.executor = new SplitPhaseExecutor(clock, holding);
    for (const [, job] of holding) if (job !== '') this.launched.add(job);
  }

  /** The scheduler's view of the pool: `nodes` are the live nodes. */
  view(jobs: readonly QueuedJob[], nodes: readonly string[]): ManagedView {
    const sched = this.executor.schedMap();
    return {
      now: this.clock(),
      nodes: nodes.map((id) => ({ id, assignment: sched.get(id) ?? '' })),
      jobs: jobs.map((j): ManagedJob => {
        const last = this.executor.lastChangeAt(j.id);
        const tRescale = this.costs.estimate(j.id);
        return {
          id: j.id, createdAt: j.createdAt, minNodes: j.minNodes, maxNodes: j.maxNodes, desired: j.nodes, finished: j.finished,
          started: j.started === true || this.launched.has(j.id), flexibility: j.flexibility,
          ...(last !== undefined ? { lastChangeAt: last } : {}), busy: this.executor.isBusy(j.id),
          ...(tRescale !== undefined ? { tRescaleMs: tRescale } : {}), ...(j.pinned === true ? { pinned: true } : {}),
        };
      }),
    };
  }

  /** A scheduling event: decide, update the scheduler's map, and return what to perform now. */
  schedule(jobs: readonly QueuedJob[], nodes: readonly string[]): JobDecision[] {
    return this.track(this.executor.execute(decideJobs(this.view(jobs, nodes), this.policy)));
  }

  /**
   * Failure warnings (proactive fault tolerance): every malleable job holding a warned node is asked
   * to shrink away from it (one shrink per job, unless an action of the job is under way). Leave the
   * warned nodes out of `schedule`'s node list until they are healthy, so no job gets them meanwhile.
   */
  vacate(warned: readonly string[], jobs: readonly QueuedJob[]): JobDecision[] {
    const actual = this.executor.actualMap();
    const malleable = new Set(jobs.filter((j) => j.flexibility === 'malleable' && !j.finished).map((j) => j.id));
    const byJob = new Map<string, string[]>();
    for (const node of warned) {
      const job = actual.get(node);
      if (job !== undefined && malleable.has(job) && !this.executor.isBusy(job)) byJob.set(job, [...(byJob.get(job) ?? []), node]);
    }
    const shrinks: JobDecision[] = [...byJob].map(([job, removed]) => ({ type: 'shrink', job, removed, nodes: [...actual].filter(([n, j]) => j === job && !removed.includes(n)).map(([n]) => n).sort() }));
    return this.track(this.executor.execute(shrinks));
  }

  /** A job reported how long a rescale took (its acknowledgement): the policy weighs the next ones by it. */
  rescaleMeasured(job: string, tRescaleMs: number): void {
    this.costs.record(job, tRescaleMs);
  }

  /**
   * When the next job's T_gap (adapted to its measured cost) runs out after `now`, so a scheduling
   * event can be raised then; undefined when none will.
   */
  nextGapEnd(jobs: readonly QueuedJob[], opts: RescaleCostOptions): number | undefined {
    const now = this.clock();
    let next = Infinity;
    for (const j of jobs) {
      if (j.finished) continue;
      const end = (this.executor.lastChangeAt(j.id) ?? -Infinity) + jobGapMs(opts, this.costs.estimate(j.id));
      if (end > now && end < next) next = end;
    }
    return next === Infinity ? undefined : next;
  }

  shrinkAcknowledged(job: string, nodes: readonly string[]): JobDecision[] {
    return this.track(this.executor.shrinkAcknowledged(job, nodes));
  }

  jobFinished(job: string): JobDecision[] {
    this.costs.forget(job);
    return this.track(this.executor.jobFinished(job));
  }

  nodeLost(node: string): JobDecision[] {
    return this.track(this.executor.nodeLost(node));
  }

  private track(actions: JobDecision[]): JobDecision[] {
    for (const a of actions) if (a.type === 'launch') this.launched.add(a.job);
    return actions;
  }
}
