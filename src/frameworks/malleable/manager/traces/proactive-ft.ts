import { ManagerCore, type QueuedJob } from '../manager-core.js';
import { managerPolicy } from '../policies.js';
import type { JobDecision } from '../job-decisions.js';

/** An outage of pool node `node` over [start, end) in simulated seconds; `warned` when predicted. */
export interface PoolOutage { node: string; start: number; end: number; warned: boolean }

export interface FtCosts {
  /** A warning comes this long before the failure (s). */
  lead: number;
  /** The job stops this long to shrink off a node, and to expand onto one (s, T_rescale). */
  shrink: number;
  expand: number;
  /** Coordinated checkpoints every `interval` seconds; a crash rolls back to the last one and restarts (`restart` s). */
  interval: number;
  restart: number;
}

export interface FtResult {
  mode: 'proactive' | 'reactive';
  /** Node-seconds of work kept (committed at checkpoints, or done at the end). */
  usefulWork: number;
  /** Node-seconds of work rolled back by crashes. */
  lostWork: number;
  /** Node-seconds the job's nodes stood still for rescales and restarts. */
  stalled: number;
  crashes: number;
  vacates: number;
  expands: number;
  /** Work kept over time (for Fig. 8): one point per event. */
  progress: Array<{ t: number; work: number; nodes: number }>;
}

/**
 * One malleable job on a pool of nodes whose outages come from a failure trace, run by the
 * manager's own code (ManagerCore): in `proactive` mode a predicted outage's warning makes the
 * manager vacate the node (a shrink, no rollback); any outage that hits a node the job still holds is
 * a crash (rollback to the last checkpoint, restart); a node coming back is given to the job again (expand).
 * `reactive` mode ignores warnings. Pure, in simulated seconds, deterministic.
 */
export function simulateFaultTolerance(pool: readonly string[], outages: readonly PoolOutage[], horizon: number, costs: FtCosts, mode: 'proactive' | 'reactive'): FtResult {
  let t = 0;
  const core = new ManagerCore(managerPolicy('equipartition', { tGapMs: 0 }), () => t * 1000);
  const job: QueuedJob = { id: 'job', createdAt: 0, flexibility: 'malleable', nodes: pool.length, minNodes: 1, maxNodes: pool.length, finished: false };
  const down = new Set<string>();
  const warned = new Set<string>();
  const r: FtResult = { mode, usefulWork: 0, lostWork: 0, stalled: 0, crashes: 0, vacates: 0, expands: 0, progress: [] };
  let held = 0;
  let pausedUntil = 0;
  let sinceCheckpoint = 0;
  const acks: Array<{ at: number; nodes: string[] }> = [];
  type Ev = { at: number; kind: 'warn' | 'fail' | 'back' | 'checkpoint'; node?: string };
  const events: Ev[] = [];
  for (const o of outages) {
    if (o.start >= horizon) continue;
    if (mode === 'proactive' && o.warned) events.push({ at: Math.max(0, o.start - costs.lead), kind: 'warn', node: o.node });
    events.push({ at: o.start, kind: 'fail', node: o.node }, { at: Math.min(o.end, horizon), kind: 'back', node: o.node });
  }
  for (let c = costs.interval; c < horizon; c += costs.interval) events.push({ at: c, kind: 'checkpoint' });
  const order = { back: 0, checkpoint: 1, warn: 2, fail: 3 };
  events.sort((a, b) => a.at - b.at || order[a.kind] - order[b.kind]);

  const pause = (until: number) => {
    if (until > pausedUntil) r.stalled += held * (until - Math.max(t, pausedUntil));
    pausedUntil = Math.max(pausedUntil, until);
  };
  const perform = (actions: JobDecision[]) => {
    for (const a of actions) {
      if (a.type === 'shrink') {
        r.vacates++;
        pause(t + costs.shrink);
        acks.push({ at: t + costs.shrink, nodes: a.nodes });
      } else {
        if (a.type === 'expand') r.expands++;
        held = a.nodes.length; // the whole job stands still while it expands
        pause(t + (a.type === 'expand' ? costs.expand : 0));
      }
    }
    held = [...core.executor.actualMap().values()].filter((j) => j === 'job').length;
  };
  const live = () => pool.filter((n) => !down.has(n) && !warned.has(n));
  const advance = (to: number) => {
    const computing = Math.max(0, to - Math.max(t, pausedUntil));
    sinceCheckpoint += computing * held;
    t = to;
  };
  perform(core.schedule([job], live()));
  r.progress.push({ t: 0, work: 0, nodes: held });
  for (;;) {
    const nextAck = acks.length > 0 ? Math.min(...acks.map((a) => a.at)) : Infinity;
    const next = Math.min(events[0]?.at ?? Infinity, nextAck);
    if (next === Infinity || next >= horizon) break;
    advance(next);
    if (nextAck <= next) {
      const ack = acks.splice(acks.findIndex((a) => a.at === nextAck), 1)[0]!;
      perform(core.shrinkAcknowledged('job', ack.nodes));
    } else {
      const e = events.shift()!;
      if (e.kind === 'checkpoint') {
        r.usefulWork += sinceCheckpoint;
        sinceCheckpoint = 0;
      } else if (e.kind === 'warn') warned.add(e.node!);
      else if (e.kind === 'fail') {
        down.add(e.node!);
        warned.delete(e.node!);
        if (core.executor.actualMap().get(e.node!) === 'job') {
          r.crashes++;
          r.lostWork += sinceCheckpoint;
          sinceCheckpoint = 0;
          // The job restarts from its checkpoint on what it keeps: a shrink under way is done by the restart.
          const inFlight = core.executor.inFlight().get('job');
          acks.length = 0;
          if (inFlight) perform(core.shrinkAcknowledged('job', inFlight.decision.nodes.filter((n) => n !== e.node)));
          perform(core.nodeLost(e.node!));
          pause(t + costs.restart);
        } else perform(core.nodeLost(e.node!));
      } else down.delete(e.node!);
    }
    perform(core.vacate([...warned], [job]));
    perform(core.schedule([job], live()));
    r.progress.push({ t, work: r.usefulWork, nodes: held });
  }
  advance(horizon);
  r.usefulWork += sinceCheckpoint;
  r.progress.push({ t: horizon, work: r.usefulWork, nodes: held });
  return r;
}
