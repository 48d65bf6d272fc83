/**
 * How a malleable job gets the nodes an expand asks for: a resource manager assigns them itself
 * (a job with `managedBy`); otherwise the job asks the core's scheduler (`assignNamedNode` for named
 * nodes, `setDesiredSize` for a count) as soon as the request arrives, and at the sync point waits,
 * bounded, until they have joined.
 */
import type { LeaderContext } from '../../runtime/kinds/job-kind.js';
import { assignNamedNode, setDesiredSize } from '../../runtime/scheduler/index.js';
import { log } from '../../util/log.js';
import { wantedNodes, type RescaleRequest } from './rescale-plan.js';

export class NodeAcquisition {
  constructor(private readonly ctx: LeaderContext, private readonly live: () => Set<string>, private readonly stopped: () => boolean) {}

  /** Asks for an expand's nodes at once, so they join while iterations go on. */
  async ask(req: RescaleRequest, current: readonly string[]): Promise<void> {
    if (this.ctx.spec.managedBy !== undefined) return; // the resource manager assigns this job's nodes
    const { names, count } = wantedNodes(req, current);
    try {
      for (const name of names) await assignNamedNode(this.ctx.client, name, this.ctx.spec.id).catch((err: Error) => log.warn('malleable', `cannot take ${name}: ${err.message}`));
      if (names.length === 0 && count > this.live().size) await setDesiredSize(this.ctx.client, this.ctx.spec.id, count);
    } catch (err) {
      log.warn('malleable', 'could not ask for nodes', err);
    }
  }

  /** An expand waits (at most `ms`) for its nodes to join; a shrink waits for nothing. */
  async awaitWanted(req: RescaleRequest, current: readonly string[], ms: number): Promise<void> {
    const { names, count } = wantedNodes(req, current);
    if (names.length === 0 && count <= current.length) return;
    await this.until(() => (names.length > 0 ? names.every((n) => this.live().has(n)) : this.live().size >= count), ms);
  }

  /** Resolves when `ready()` holds after a membership change, or after `ms` (a deadline, not a sleep). */
  until(ready: () => boolean, ms: number): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = this.ctx.membership.on('change', () => (ready() || this.stopped()) && done());
    });
  }
}
