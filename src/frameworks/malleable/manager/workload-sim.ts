import type { SchedulingPolicy } from '../../../runtime/scheduler/index.js';
import type { JobDecision } from './job-decisions.js';
import type { Flexibility, ManagedView } from './managed-job.js';
import { ManagerCore, type QueuedJob } from './manager-core.js';

/** A job of a simulated workload; `work` is in node-seconds (a job on n nodes runs work/n seconds). */
export interface SimJobSpec {
  id: string;
  arrival: number;
  flexibility: Flexibility;
  nodes: number;
  minNodes: number;
  maxNodes: number;
  work: number;
}

export interface SimCosts {
  /** Seconds from a launch until the job computes. */
  launch: number;
  /** Seconds a shrink stops the job (T_rescale), until it acknowledges. */
  shrink: number;
  /** Seconds an expand stops the job before it computes on the new nodes. */
  expand: number;
}

export interface SimJobResult { id: string; arrival: number; start: number; end: number; rescales: number }

export interface SimResult {
  policy: string;
  jobs: SimJobResult[];
  /** From the first arrival to the last completion, s. */
  totalTime: number;
  /** Mean of start − arrival, s. */
  meanResponse: number;
  /** Mean of end − arrival, s. */
  meanCompletion: number;
  /** Node-seconds held by jobs over pool size × total time. */
  utilization: number;
  /** Nodes held by each job after each change (the seed's Fig. 6). */
  timeline: Array<{ t: number; job: string; nodes: number }>;
}

interface Running { spec: SimJobSpec; held: number; left: number; pausedUntil: number; rescales: number; start: number; end?: number }

/**
 * A workload on a pool of `poolSize` nodes in simulated time (seconds), scheduled by the resource
 * manager's own code (ManagerCore: policy + split-phase executor) — only the jobs are modelled:
 * perfect speedup, and a job stops computing for the launch, shrink and expand costs. Scheduling
 * events are arrivals, completions, acknowledgements and T_gap expiries. Deterministic.
 */
export function simulateWorkload(specs: readonly SimJobSpec[], poolSize: number, policy: SchedulingPolicy<ManagedView>, costs: SimCosts, tGap = 0): SimResult {
  let t = 0;
  const core = new ManagerCore(policy, () => t * 1000);
  const pool = Array.from({ length: poolSize }, (_, i) => `n${String(i).padStart(3, '0')}`);
  const queue: QueuedJob[] = [];
  const jobs = new Map<string, Running>();
  const acks: Array<{ at: number; job: string; nodes: string[] }> = [];
  const arrivals = [...specs].sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  const timeline: SimResult['timeline'] = [];
  let heldNodeSeconds = 0;

  const perform = (actions: JobDecision[]) => {
    for (const a of actions) {
      const job = jobs.get(a.job)!;
      if (a.type === 'shrink') {
        job.pausedUntil = Math.max(job.pausedUntil, t + costs.shrink);
        job.rescales++;
        acks.push({ at: t + costs.shrink, job: a.job, nodes: a.nodes });
        continue;
      }
      job.held = a.nodes.length;
      if (a.type === 'launch') {
        job.start = t;
        job.pausedUntil = t + costs.launch;
      } else {
        job.pausedUntil = Math.max(job.pausedUntil, t) + costs.expand;
        job.rescales++;
      }
      timeline.push({ t, job: a.job, nodes: job.held });
    }
  };
  const schedule = () => perform(core.schedule(queue, pool));
  const finishAt = (j: Running) => (j.held > 0 && j.start >= 0 && j.end === undefined ? Math.max(t, j.pausedUntil) + j.left / j.held : Infinity);

  for (let guard = 0; guard < 1_000_000; guard++) {
    const nextArrival = arrivals[0]?.arrival ?? Infinity;
    const nextAck = Math.min(...acks.map((a) => a.at));
    const nextEnd = Math.min(...[...jobs.values()].map(finishAt));
    const nextGap = Math.min(...[...jobs.values()].flatMap((j) => {
      const last = core.executor.lastChangeAt(j.spec.id);
      return j.end === undefined && last !== undefined && last / 1000 + tGap > t ? [last / 1000 + tGap] : [];
    }));
    const next = Math.min(nextArrival, nextAck, nextEnd, nextGap);
    if (next === Infinity) break;
    for (const j of jobs.values()) {
      if (j.end !== undefined) continue;
      heldNodeSeconds += j.held * (next - t);
      const computing = Math.max(0, next - Math.max(t, j.pausedUntil));
      j.left = Math.max(0, j.left - computing * j.held);
    }
    t = next;
    while (arrivals[0] && arrivals[0].arrival <= t) {
      const s = arrivals.shift()!;
      jobs.set(s.id, { spec: s, held: 0, left: s.work, pausedUntil: 0, rescales: 0, start: -1 });
      queue.push({ id: s.id, createdAt: s.arrival * 1000, flexibility: s.flexibility, nodes: s.nodes, minNodes: s.minNodes, maxNodes: s.maxNodes, finished: false });
    }
    for (const a of acks.filter((x) => x.at <= t)) {
      acks.splice(acks.indexOf(a), 1);
      const j = jobs.get(a.job)!;
      j.held = a.nodes.length;
      timeline.push({ t, job: a.job, nodes: j.held });
      perform(core.shrinkAcknowledged(a.job, a.nodes));
    }
    for (const j of jobs.values()) {
      if (j.end === undefined && j.held > 0 && j.left <= 1e-9 && t >= j.pausedUntil) {
        j.end = t;
        j.held = 0;
        queue.find((q) => q.id === j.spec.id)!.finished = true;
        timeline.push({ t, job: j.spec.id, nodes: 0 });
        perform(core.jobFinished(j.spec.id));
      }
    }
    schedule();
  }
  const done = [...jobs.values()];
  if (done.some((j) => j.end === undefined)) throw new Error(`simulation ended with unfinished jobs: ${done.filter((j) => j.end === undefined).map((j) => j.spec.id).join(', ')}`);
  const first = Math.min(...done.map((j) => j.spec.arrival));
  const totalTime = Math.max(...done.map((j) => j.end!)) - first;
  const results = done.map((j) => ({ id: j.spec.id, arrival: j.spec.arrival, start: j.start, end: j.end!, rescales: j.rescales }));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    policy: policy.name, jobs: results, totalTime,
    meanResponse: mean(results.map((r) => r.start - r.arrival)),
    meanCompletion: mean(results.map((r) => r.end - r.arrival)),
    utilization: heldNodeSeconds / (poolSize * totalTime),
    timeline,
  };
}
