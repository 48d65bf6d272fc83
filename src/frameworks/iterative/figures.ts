import type { TimedEvent } from '../../runtime/kinds/kind-events.js';

/**
 * What each node of an iterative job measures (iterations done and held, per-thread speed and
 * finish time), gathered by the leader for the `figures` control request and flattened into the
 * node's published counters for the dashboard's job-kind panel.
 */
export interface NodeFigures {
  node: string;
  done: number;
  held: number;
  /** Last measured speed of each thread (iterations / s). */
  speeds: number[];
  doneBySlot: number[];
  /** When each thread last ran out of work (the node's monotonic seconds; -1 while busy). */
  idleSince: number[];
  /** The node's monotonic clock when these figures were taken (s). */
  now: number;
  checkpoints: number;
  orders: number;
  /** The process-level assignment (RUPER), 0 otherwise. */
  assigned: number;
}

/** Flat numbers for the dashboard: totals, then `speed.<thread>` per thread. */
export function figuresOf(f: NodeFigures): Record<string, number> {
  const flat: Record<string, number> = { iterationsDone: f.done, iterationsHeld: f.held, speed: Math.round(f.speeds.reduce((a, b) => a + b, 0)), balanceCheckpoints: f.checkpoints, balanceOrders: f.orders };
  f.speeds.forEach((s, i) => (flat[`speed.${i}`] = Math.round(s)));
  return flat;
}

/**
 * Finish times for the dashboard (seed 001 Fig. 6–7): a span per thread and one for the process, from
 * when the node joined the job to when it last ran out of work; still open while it works.
 */
export function finishEventsOf(f: NodeFigures, joinedAt: number): TimedEvent[] {
  const epochMs = (s: number) => Math.round(performance.timeOrigin + s * 1000);
  const threads = f.idleSince.map((idle, t): TimedEvent => ({ id: `${f.node}/${t}`, lane: `${f.node} · thread ${t}`, label: 'thread', at: joinedAt, end: epochMs(idle >= 0 ? idle : f.now), ...(idle >= 0 ? {} : { open: true }) }));
  const busy = threads.some((t) => t.open);
  const process: TimedEvent = { id: f.node, lane: f.node, label: 'process', at: joinedAt, end: busy ? epochMs(f.now) : Math.max(joinedAt, ...threads.map((t) => t.end!)), ...(busy ? { open: true } : {}) };
  return [process, ...threads];
}

/** Asks every peer for its figures and resolves with all of them (this node's first), or fails after 10 s. */
export function collectFigures(
  own: NodeFigures,
  peers: string[],
  ask: (peer: string) => Promise<void>,
  listen: (listener: ((from: string, f: NodeFigures) => void) | undefined) => void,
): Promise<NodeFigures[]> {
  const all = new Map<string, NodeFigures>([[own.node, own]]);
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      listen(undefined);
      resolve([...all.values()]);
    };
    const timer = setTimeout(() => {
      listen(undefined);
      reject(new Error(`iterative: figures answered by ${all.size - 1} of ${peers.length} members`));
    }, 10_000);
    listen((from, f) => {
      all.set(from, f);
      if (all.size === peers.length + 1) done();
    });
    if (peers.length === 0) return done();
    for (const peer of peers) ask(peer).catch(() => undefined);
  });
}
