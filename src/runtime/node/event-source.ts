import { joinPath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { clusterPaths } from '../job/job-paths.js';
import { EventRing, type EventLists, type TimedEvent } from '../kinds/kind-events.js';
import { StatsPublisher } from './node-stats.js';

/** Where event sources publish: `/tidepool/events/<source>` (ephemeral, read by the dashboard). */
export function eventSourcesPath(root?: string): string {
  return joinPath(clusterPaths(root).root, 'events');
}

const NAME = /^[\w.-]{1,64}$/;

/** What an event source's znode holds. */
export interface EventPublisherData {
  lists: EventLists;
}

/** How an `EventPublisher` writes its lists. */
export interface EventPublisherOptions {
  /** Root path of the cluster in the coordination service (default /tidepool). */
  root?: string;
  /** Most often the lists are written (ms, default 1000); nothing is written while they do not change. */
  intervalMs?: number;
  /** Events kept per list (default 100): the newest. */
  limit?: number;
}

/**
 * Bounded event lists published by a component that acts on jobs from outside the nodes (a service's
 * batch costs, a resource manager's rescales), for the dashboard: an ephemeral znode rewritten at most
 * once per interval and only when a list changed, like a node's stats. Events are kept in memory up
 * to `limit` per list, so a busy source costs one small write a second, never one per event.
 */
export class EventPublisher {
  private readonly lists = new Map<string, EventRing>();
  private readonly publisher: StatsPublisher<EventPublisherData>;
  private readonly limit: number;

  constructor(client: CoordClient, readonly name: string, opts: EventPublisherOptions = {}) {
    if (!NAME.test(name)) throw new Error(`event source name "${name}" must be 1-64 letters, digits, '_', '.' or '-'`);
    this.limit = opts.limit ?? 100;
    this.publisher = new StatsPublisher(client, joinPath(eventSourcesPath(opts.root), name), () => ({ lists: this.snapshot() }), opts.intervalMs ?? 1_000);
  }

  start(): void {
    this.publisher.start();
  }

  /** Adds (or, with an id already held, replaces) an event of `list`. */
  put(list: string, event: TimedEvent): void {
    if (!NAME.test(list)) throw new Error(`event list name "${list}" must be 1-64 letters, digits, '_', '.' or '-'`);
    let ring = this.lists.get(list);
    if (!ring) this.lists.set(list, (ring = new EventRing(this.limit)));
    ring.put(event);
  }

  /** Writes now if anything changed (e.g. before stopping). */
  flush(): Promise<void> {
    return this.publisher.publish();
  }

  async stop(): Promise<void> {
    await this.flush();
    await this.publisher.stop();
  }

  private snapshot(): EventLists {
    return Object.fromEntries([...this.lists].map(([name, ring]) => [name, ring.list()]));
  }
}
