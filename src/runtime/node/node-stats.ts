import { isCoordError } from '../../coord/errors.js';
import { parentOf } from '../../coord/paths.js';
import { addStats, emptyStats, type RecipeStats } from '../../coord/recipes/recipe-stats.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import type { EventLists } from '../kinds/kind-events.js';
import { ZERO_COUNTERS, type MemberCounters, type MemberRole } from '../kinds/job-kind.js';
import { log } from '../../util/log.js';

/**
 * A node's load and counters, published as an ephemeral znode (`/tidepool/stats/<node>`) so that
 * any monitor (the dashboard, metrics, `tidepool status`) sees every node without talking to it.
 * Counters are cumulative within the node's current job and restart at 0 in the next one.
 */
export interface NodeStats extends NodeCounters {
  job: string | null;
  /** The kind of the node's current job, and that kind's own figures (a layer adds its own without touching the core's). */
  kind?: string;
  figures?: Record<string, number>;
  /** Small bounded event lists of the kind (task spans, finish times; see kinds/kind-events.ts). */
  events?: EventLists;
  workers: number;
  /** When the node wrote this (ms since the epoch). */
  at: number;
}

/** A node's load and cumulative counters in its current job (also part of the dashboard's NodeView). */
export interface NodeCounters extends Omit<MemberCounters, 'workerMs' | 'figures' | 'events'> {
  /** Workers running a task now. */
  busy: number;
  /** Tasks waiting in the node's pool (its queue depth). */
  queued: number;
  /** Coordination operations of the node's job (the kind's, such as a ledger's, and global variables). */
  coord: RecipeStats;
}

/** A node's stats from its current job (none: an idle node). */
export function statsOfJob(
  job: { spec: { id: string }; kind: { name: string }; role: MemberRole; vars: { stats: RecipeStats } } | undefined,
  workers: number,
): Omit<NodeStats, 'at'> {
  if (!job) return { job: null, workers, busy: 0, queued: 0, ...ZERO_COUNTERS, coord: emptyStats() };
  const load = job.role.load?.() ?? { running: 0, pooled: 0 };
  const { figures, ...counters } = job.role.counters?.() ?? ZERO_COUNTERS;
  return {
    job: job.spec.id, kind: job.kind.name, workers, busy: load.running, queued: load.pooled, ...counters,
    ...(figures ? { figures } : {}),
    coord: addStats(job.role.coordStats?.() ?? emptyStats(), job.vars.stats),
  };
}

/**
 * Writes a node's stats every `intervalMs` while they change (an idle node costs no writes).
 * One setData per node and interval is the whole coordination cost.
 */
export class StatsPublisher<T extends object = Omit<NodeStats, 'at'>> {
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private created = false;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly client: CoordClient,
    private readonly path: string,
    private readonly read: () => T,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.publish(), this.intervalMs);
    this.timer.unref();
  }

  /**
   * Publishes now if anything changed (also called on job joins and leaves). The stats are read at
   * the call, not when the write gets its turn: a node leaving a job publishes its final counters
   * before it clears the job, and a write still under way must not let them be read as cleared.
   */
  publish(): Promise<void> {
    if (this.stopped || this.intervalMs <= 0) return this.writing;
    const body = JSON.stringify(this.read());
    this.writing = this.writing.then(() => this.write(body)).catch((err: unknown) => {
      // Stats are advisory: a lost write is replaced by the next one.
      log.debug('node', 'could not publish stats', err);
    });
    return this.writing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.writing;
  }

  private async write(body: string): Promise<void> {
    if (body === this.last && this.created) return;
    const data = Buffer.from(`${body.slice(0, -1)},"at":${Date.now()}}`);
    if (this.created) {
      try {
        await this.client.setData(this.path, data);
        this.last = body;
        return;
      } catch (err) {
        if (!isCoordError(err, 'NO_NODE')) throw err;
        this.created = false; // our session was replaced: the ephemeral znode went with it
      }
    }
    await mkdirp(this.client, parentOf(this.path));
    try {
      await this.client.create(this.path, data, 'ephemeral');
    } catch (err) {
      if (!isCoordError(err, 'NODE_EXISTS')) throw err;
      await this.client.setData(this.path, data);
    }
    this.created = true;
    this.last = body;
  }
}
