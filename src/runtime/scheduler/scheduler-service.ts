import { joinPath } from '../../coord/paths.js';
import { LeaderElection } from '../../coord/recipes/leader-election.js';
import type { CoordClient } from '../../coord/types.js';
import { log } from '../../util/log.js';
import { clusterPaths } from '../job/job-paths.js';
import type { SchedulingPolicy } from './policy.js';
import { Reconciler } from './reconciler.js';

/**
 * Runs the cluster's scheduler where it is sure to exist: every node (and `tidepool monitor`)
 * stands in one cluster-wide election, and the elected one runs the Reconciler until it loses its
 * session or stops. Two reconcilers overlapping around a failover are safe (their plans are fenced).
 */
export class SchedulerService {
  private readonly election: LeaderElection;
  private reconciler: Reconciler | undefined;
  private stopped = false;

  constructor(private readonly client: CoordClient, private readonly opts: { id: string; root?: string; policy?: SchedulingPolicy }) {
    this.election = new LeaderElection(client, joinPath(clusterPaths(opts.root).root, 'scheduler-election'), { id: opts.id, data: null });
  }

  get active(): boolean {
    return this.reconciler !== undefined;
  }

  async start(): Promise<void> {
    this.election.on('elected', () => void this.run());
    this.election.on('lost', () => this.halt());
    await this.election.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt();
    await this.election.resign().catch(() => undefined);
  }

  private async run(): Promise<void> {
    if (this.stopped || this.reconciler) return;
    const reconciler = new Reconciler(this.client, { ...(this.opts.root ? { root: this.opts.root } : {}), ...(this.opts.policy ? { policy: this.opts.policy } : {}) });
    this.reconciler = reconciler;
    reconciler.on('ended', () => this.halt());
    try {
      await reconciler.start();
    } catch (err) {
      log.warn('scheduler', 'the reconciler could not start', err);
      this.halt();
    }
  }

  private halt(): void {
    this.reconciler?.stop();
    this.reconciler = undefined;
  }
}
