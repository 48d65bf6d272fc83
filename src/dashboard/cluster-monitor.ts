import type { CoordClient } from '../coord/types.js';
import { Emitter } from '../util/emitter.js';
import { log } from '../util/log.js';
import { ClusterReader } from './cluster-reader.js';
import type { ClusterSnapshot, DashboardHello } from './snapshot.js';
import { SnapshotBuilder } from './snapshot-builder.js';

export interface MonitorOptions {
  /** How often to read the cluster (ms, default 1000). */
  intervalMs?: number;
  /** Timeline length kept (points, default 600: ten minutes at 1 s). */
  historyPoints?: number;
  /** Cluster root in the coordination service. */
  root?: string;
}

/**
 * Watches a cluster through its coordination service: every tick it reads nodes, their published
 * stats and jobs, and emits a snapshot. Works the same on the embedded backend and on ZooKeeper,
 * so the dashboard of `tidepool demo` and of `tidepool monitor` is one code path.
 */
export class ClusterMonitor {
  readonly events = new Emitter<{ snapshot: ClusterSnapshot }>();
  readonly intervalMs: number;
  private readonly reader: ClusterReader;
  private readonly builder: SnapshotBuilder;
  private timer: NodeJS.Timeout | undefined;
  private latest: ClusterSnapshot | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  /** Why the latest read of the cluster failed (undefined once one succeeds). */
  private readFailure: string | undefined;

  constructor(client: CoordClient, opts: MonitorOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 1_000;
    this.reader = new ClusterReader(client, opts.root);
    this.builder = new SnapshotBuilder(opts.historyPoints ?? 600);
  }

  /** Takes the first snapshot, then one per interval. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
  }

  on(listener: (snapshot: ClusterSnapshot) => void): () => void {
    return this.events.on('snapshot', listener);
  }

  /** The latest snapshot and the timeline so far (what a new dashboard page receives first). */
  hello(): DashboardHello {
    if (!this.latest) throw new Error('the monitor has not taken a snapshot yet: call start() first');
    return { snapshot: this.latest, history: this.builder.history(), figures: this.builder.figures(), events: this.builder.eventLists(), intervalMs: this.intervalMs };
  }

  get snapshot(): ClusterSnapshot | undefined {
    return this.latest;
  }

  /**
   * Undefined while the monitor's view is current: it has read the cluster and its latest read
   * succeeded; else why not (a dashboard's `/readyz`).
   */
  readiness(): string | undefined {
    if (this.stopped) return 'the monitor has stopped';
    if (this.readFailure !== undefined) return `the latest read of the cluster failed: ${this.readFailure}`;
    if (!this.latest) return 'the monitor has not read the cluster yet';
    return undefined;
  }

  /** Reads the cluster now (ticks never overlap: a slow read delays the next one). */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = (async () => {
      try {
        const reading = await this.reader.read();
        if (this.stopped) return;
        this.latest = this.builder.add(reading);
        this.readFailure = undefined;
        this.events.emit('snapshot', this.latest);
      } catch (err) {
        this.readFailure = err instanceof Error ? err.message : String(err);
        log.warn('monitor', 'could not read the cluster', err);
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }
}
