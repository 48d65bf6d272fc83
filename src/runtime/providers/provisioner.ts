import { randomBytes } from 'node:crypto';
import type { CoordClient } from '../../coord/types.js';
import { Emitter } from '../../util/emitter.js';
import { log } from '../../util/log.js';
import type { ClusterView, Decision } from '../scheduler/cluster-view.js';
import { Reconciler } from '../scheduler/reconciler.js';
import { NodePool, type NodePoolOptions, type PoolInstruction } from './node-pool.js';
import type { NodeDriver, NodeProvider, NodeSpec, ProvisionedNode, ProviderEvent } from './node-provider.js';
import { nextIdleExpiry, scaleDecision, type ScaleOptions } from './scale-demand.js';

export interface ProvisionerOptions {
  client: CoordClient;
  driver: NodeDriver;
  /** What every node runs unless `provision` says otherwise. */
  spec: NodeSpec;
  /** Follow the scheduler: start nodes when jobs wait, release idle ones (scale-demand.ts). Without it, only explicit provision/release. */
  scale?: ScaleOptions;
  /** Timeouts and backoff of the node states (node-pool.ts); ids default to `${driver.name}-${random}-N`. */
  pool?: Partial<NodePoolOptions>;
  /** Root path of the cluster in the coordination service. */
  root?: string;
  now?: () => number;
}

/**
 * A node provider at work: a NodePool (the states) carried out by a NodeDriver (the I/O), and,
 * with `scale`, following the scheduler's plan to decide when to provision and release. The plan
 * comes from a Reconciler of its own that reads and plans but never writes (the elected scheduler
 * does that), so the provisioner sees what the scheduler sees wherever the scheduler runs.
 */
export class Provisioner implements NodeProvider {
  readonly name: string;
  private readonly pool: NodePool;
  private readonly events = new Emitter<{ event: ProviderEvent }>();
  private readonly now: () => number;
  private reconciler: Reconciler | undefined;
  private last: { view: ClusterView; decisions: readonly Decision[] } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly pending = new Set<Promise<unknown>>();

  private constructor(private readonly opts: ProvisionerOptions) {
    this.name = opts.driver.name;
    this.now = opts.now ?? Date.now;
    this.pool = new NodePool({ idPrefix: `${opts.driver.name}-${randomBytes(2).toString('hex')}`, ...opts.pool });
  }

  /** Starts following the cluster (with `scale`) and returns the provider. */
  static async start(opts: ProvisionerOptions): Promise<Provisioner> {
    const p = new Provisioner(opts);
    const reconciler = new Reconciler(opts.client, { observeOnly: true, ...(opts.root !== undefined ? { root: opts.root } : {}) });
    p.reconciler = reconciler;
    reconciler.on('planned', ({ view, decisions }) => p.observe(view, decisions));
    reconciler.on('ended', (why) => log.warn('provider', `${p.name}: lost the coordination session (${why}); no more provisioning`));
    await reconciler.start();
    return p;
  }

  provision(count: number, spec: Partial<NodeSpec> = {}): ProvisionedNode[] {
    if (this.stopped) throw new Error(`provider ${this.name} is stopped`);
    const { nodes, instructions } = this.pool.provision(count, { ...this.opts.spec, ...spec }, this.now());
    this.apply(instructions);
    return nodes;
  }

  release(nodeIds: readonly string[]): void {
    this.apply(this.pool.release(nodeIds, this.now()));
  }

  nodes(): ProvisionedNode[] {
    return this.pool.nodes();
  }

  on(listener: (event: ProviderEvent) => void): () => void {
    return this.events.on('event', listener);
  }

  /**
   * Stops provisioning; with `release` (default true) drains and stops every node it provided and
   * waits until each is released or failed (the pool's timeouts bound the wait).
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.reconciler?.stop();
    if (opts.release !== false) {
      this.release(this.pool.active().map((n) => n.id));
      while (this.pool.active().length > 0) {
        await new Promise<void>((resolve) => {
          const off = this.on(() => {
            off();
            resolve();
          });
        });
      }
    }
    clearTimeout(this.timer);
    await Promise.allSettled([...this.pending]);
    await this.opts.driver.close?.();
  }

  /** A scheduling pass: what the cluster shows and what the scheduler plans. */
  private observe(view: ClusterView, decisions: readonly Decision[]): void {
    this.last = { view, decisions };
    this.apply(this.pool.seen(view.nodes, this.now()));
    this.decide();
  }

  /** Provisions for waiting jobs and releases idle nodes (with `scale`). */
  private decide(): void {
    const scale = this.opts.scale;
    if (!scale || !this.last || this.stopped) return this.schedule();
    const now = this.now();
    const d = scaleDecision(this.last.view, this.last.decisions, this.pool.nodes(), now, this.pool.startAllowedAt(), scale);
    if (d.provision > 0) {
      log.info('provider', `${this.name}: jobs lack ${d.lacking} node(s); starting ${d.provision}`);
      this.apply(this.pool.provision(d.provision, this.opts.spec, now).instructions);
    }
    if (d.release.length > 0) {
      log.info('provider', `${this.name}: releasing idle node(s) ${d.release.join(', ')}`);
      this.apply(this.pool.release(d.release, now));
    }
    this.schedule();
  }

  /** Wakes up at the next timeout, idle expiry or end of a backoff. */
  private schedule(): void {
    clearTimeout(this.timer);
    const times = [this.pool.nextDeadline(), this.opts.scale && !this.stopped ? nextIdleExpiry(this.pool.nodes(), this.opts.scale.idleMs) : undefined, this.pool.startAllowedAt()]
      .filter((t): t is number => t !== undefined && Number.isFinite(t));
    const now = this.now();
    const future = times.filter((t) => t > now);
    if (future.length === 0) return;
    this.timer = setTimeout(() => {
      this.apply(this.pool.tick(this.now()));
      this.decide();
    }, Math.min(...future) - now + 1);
    this.timer.unref();
  }

  private apply(instructions: readonly PoolInstruction[]): void {
    for (const ins of instructions) {
      switch (ins.type) {
        case 'start': this.launch(ins.id, ins.spec); break;
        case 'stop': this.track(this.opts.driver.stop(ins.id, ins.force).catch((err: unknown) => log.warn('provider', `${this.name}: could not stop ${ins.id}`, err))); break;
        case 'report': this.report(ins.event); break;
      }
    }
    this.schedule();
  }

  private launch(id: string, spec: NodeSpec): void {
    this.track(this.opts.driver.start(id, spec).then(
      (launch) => {
        this.apply(this.pool.launched(id, launch.where, this.now()));
        // Not tracked: a node may outlive this provisioner (stop with release: false).
        void launch.ended.then((how) => {
          this.apply(this.pool.ended(id, how, this.now()));
          this.decide();
        });
      },
      (err: unknown) => {
        this.apply(this.pool.launchFailed(id, err instanceof Error ? err.message : String(err), this.now()));
        this.decide();
      },
    ));
  }

  private report(event: ProviderEvent): void {
    if (event.type === 'state') {
      const where = event.where ? ` on ${event.where}` : '';
      if (event.state === 'failed') log.warn('provider', `${this.name}: node ${event.node} failed${where}: ${event.error ?? 'unknown reason'}`);
      else log.info('provider', `${this.name}: node ${event.node} ${event.state}${where}`);
    } else {
      log.warn('provider', `${this.name}: ${event.failures} start(s) failed in a row; next attempt in ${Math.max(0, Math.round((event.after - this.now()) / 1000))} s`);
    }
    this.events.emit('event', event);
  }

  private track(p: Promise<unknown>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }
}
