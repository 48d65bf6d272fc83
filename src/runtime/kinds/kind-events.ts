/**
 * Small, bounded lists of timed events that a job kind publishes with its node's stats (or that a
 * component acting on jobs, such as a service or a resource manager, publishes as an event source):
 * what the dashboard cannot derive from figures sampled over time — a task's span on a worker, a
 * thread's finish time, a rescale, one batch's cost breakdown.
 *
 * The dashboard draws a list by its events' shape: if any has an `end`, as spans (a Gantt, a row per
 * `lane`); if they have `values` and no `label`, as breakdowns (a stacked bar per event); otherwise as
 * instants (their values in the tooltip; those naming a job are also marked on the nodes-per-job chart).
 */
export interface TimedEvent {
  /** Unique within its list: a later event with the same id replaces the earlier (a span that grew, a finish that moved). */
  id: string;
  /** When it happened or started (ms since the epoch). */
  at: number;
  /** When it ended (ms since the epoch): the event is a span. */
  end?: number;
  /** The span is still going on: `end` is when it was published; the dashboard ends it with its job. */
  open?: boolean;
  /** The row of a span (a worker, a thread, a node). */
  lane?: string;
  /** What it was (a task's stage, "shrink", …); spans are coloured by it. */
  label?: string;
  /** The job it belongs to (filled in by the dashboard for a kind's events). */
  job?: string;
  /** A breakdown (milliseconds by phase, say), drawn as one stacked bar per event. */
  values?: Record<string, number>;
}

/** A publisher's lists, by name (e.g. `{ tasks: [...] }`). */
export type EventLists = Record<string, TimedEvent[]>;

/**
 * The newest `limit` events of one list, in the order they were first put; putting an event with an
 * id already held replaces it in place. Memory is bounded by `limit` whatever the publisher does.
 */
export class EventRing {
  private readonly byId = new Map<string, TimedEvent>();

  constructor(readonly limit = 100) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`an event ring needs a limit ≥ 1, got ${limit}`);
  }

  put(event: TimedEvent): void {
    if (this.byId.has(event.id)) {
      this.byId.set(event.id, event); // same position: a Map keeps the first insertion's order
      return;
    }
    this.byId.set(event.id, event);
    if (this.byId.size > this.limit) this.byId.delete(this.byId.keys().next().value!);
  }

  get size(): number {
    return this.byId.size;
  }

  list(): TimedEvent[] {
    return [...this.byId.values()];
  }
}
