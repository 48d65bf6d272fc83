/**
 * The workflow engine's real code (WorkflowEngine: dispatchers, location-service shards, workers,
 * stealing) for thousands of members over a simulated network, for AME's dispatch figures (§5.1,
 * Fig. 6–9): one engine per simulated node, messages delivered after a seeded latency (FIFO per
 * channel), and every node handling its messages one at a time, each taking `serviceSeconds` and
 * `itemSeconds` per task or file it lists of the node's time — the cost that makes one central dispatcher the bottleneck as the node count grows
 * (AME's login node). A message is given its turn at its receiver when it is sent (after the turns
 * already given), a simplification that keeps each channel in order. Tasks take their runtime on one
 * of the node's slots (AME's BG/P: 4 cores per node). Events are kept in a binary heap, so a run of
 * 100,000 tasks on 2,048 nodes is a few hundred thousand events.
 */
import type { LayerBody } from '../src/runtime/kinds/job-kind.js';
import type { AmeUnits } from '../src/frameworks/workflow/ame-units.js';
import type { DispatchMode, JournalState } from '../src/frameworks/workflow/dispatcher.js';
import { WorkflowEngine } from '../src/frameworks/workflow/workflow-engine.js';
import type { Workflow } from '../src/frameworks/workflow/workflow.js';
import { Rng } from '../src/util/rng.js';

export interface ScaleSimOptions {
  nodes: number;
  /** Task slots per node (cores). */
  slots: number;
  mode: DispatchMode;
  units: AmeUnits;
  /** Seconds a message takes on the wire (× 0.5–1.5, seeded). */
  latency: number;
  /** Seconds of a node's time each message it receives takes, and each item in it (a task or a file named in its lists). */
  serviceSeconds: number;
  itemSeconds: number;
  /** Seconds between the engines' ticks (steal back-off). */
  tickSeconds?: number;
  seed?: number;
}

interface Event { at: number; seq: number; fn: () => void }

/** A binary min-heap of events by time, then by the order they were made. */
class EventHeap {
  private readonly items: Event[] = [];
  get size(): number {
    return this.items.length;
  }
  private less(a: Event, b: Event): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
  push(e: Event): void {
    const h = this.items;
    h.push(e);
    for (let i = h.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Event | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

export interface ScaleSimResult {
  /** Simulated seconds from the first view to the leader's outcome. */
  timeToSolution: number;
  /** Seconds from the start to the first and the last task start. */
  firstStart: number;
  lastStart: number;
  messages: number;
  events: number;
  /** Nodes that dispatched tasks, and that answered location queries or updates. */
  dispatchers: number;
  shards: number;
}

/** The items a message carries: the lengths of its lists (a batch of tasks, of files, of counts). */
function itemsIn(body: LayerBody): number {
  let n = 0;
  for (const v of Object.values(body as Record<string, unknown>)) if (Array.isArray(v)) n += v.length;
  return n;
}

export function runScaleSim(workflow: Workflow, opts: ScaleSimOptions): ScaleSimResult {
  const rng = new Rng(opts.seed ?? 1);
  const heap = new EventHeap();
  let now = 0;
  let seq = 0;
  let messages = 0;
  let events = 0;
  const at = (time: number, fn: () => void) => heap.push({ at: time, seq: seq++, fn });
  const ids = Array.from({ length: opts.nodes }, (_, i) => `n${String(i).padStart(5, '0')}`);
  const busyUntil = new Map<string, number>();
  const lastDelivery = new Map<string, number>();
  const journal: [number, string][] = [];
  let outcome: { ok: true } | { ok: false; error: string } | undefined;
  let firstStart = Infinity;
  let lastStart = 0;
  const engines = new Map<string, WorkflowEngine>();
  for (const id of ids) {
    engines.set(id, new WorkflowEngine(workflow, id, {
      send: (to, body: LayerBody) => {
        messages++;
        const channel = `${id}>${to}`;
        const arrival = Math.max(now + opts.latency * (0.5 + rng.next()), lastDelivery.get(channel) ?? 0);
        lastDelivery.set(channel, arrival);
        const start = Math.max(arrival, busyUntil.get(to) ?? 0);
        const took = opts.serviceSeconds + opts.itemSeconds * itemsIn(body);
        busyUntil.set(to, start + took);
        at(start + took, () => engines.get(to)!.onMessage(id, body));
      },
      run: (task) => {
        firstStart = Math.min(firstStart, now);
        lastStart = Math.max(lastStart, now);
        at(now + Math.max(0, workflow.tasks[task]!.runtime), () => engines.get(id)!.taskFinished(task, []));
      },
      readJournal: (): JournalState => ({ done: new Map(journal), saved: new Set() }),
      journal: (done) => void journal.push(...done),
      finish: (o) => void (outcome ??= o),
      random: () => rng.next(),
    }, { mode: opts.mode, units: opts.units, slots: opts.slots }));
  }
  const tick = opts.tickSeconds ?? 0.1;
  const ticking = () => at(now + tick, () => {
    for (const e of engines.values()) e.tick();
    if (!outcome) ticking();
  });
  at(0, () => engines.get(ids[0]!)!.lead(ids));
  ticking();
  while (!outcome && heap.size > 0) {
    const e = heap.pop()!;
    now = e.at;
    events++;
    e.fn();
  }
  if (!outcome) throw new Error('the simulated run ended with no outcome (no event left)');
  if (!outcome.ok) throw new Error(`the simulated run failed: ${outcome.error}`);
  let dispatchers = 0;
  let shards = 0;
  for (const e of engines.values()) {
    if (e.stats.dispatched > 0) dispatchers++;
    if (e.shard.queries + e.shard.updates > 0) shards++;
  }
  return { timeToSolution: now, firstStart, lastStart, messages, events, dispatchers, shards };
}
