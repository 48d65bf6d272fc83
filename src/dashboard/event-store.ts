import { EventRing, type TimedEvent } from '../runtime/kinds/kind-events.js';
import type { EventListView } from './snapshot.js';

export interface EventStoreLimits {
  /** Events kept per list (default 1000: the newest). */
  perList?: number;
  /** Lists kept (default 32): when more publish, the one that changed longest ago goes. */
  lists?: number;
}

const NAME = /^[\w.-]{1,64}$/;
const MAX_TEXT = 128;
const MAX_VALUES = 16;
/** Events read from one publication of one list at most (a well-behaved publisher sends far fewer). */
const MAX_PER_PUBLICATION = 1000;

interface Held {
  origin: string;
  list: string;
  ring: EventRing;
  /** Each held event as JSON, to tell a republished event from a changed one. */
  seen: Map<string, string>;
}

/**
 * The event lists the dashboard has seen: what kinds publish with their nodes' stats (merged over
 * the kind's nodes and jobs; each event gets its job, and its node as lane when it names none) and
 * what event sources publish. Publishers repeat their lists on every write; the store keeps each
 * event once (by id), reports only what is new or changed, and bounds every list and the number of
 * lists. Events come from other processes: anything malformed is dropped, strings are cut short.
 */
export class EventStore {
  private readonly held = new Map<string, Held>();
  private readonly perList: number;
  private readonly maxLists: number;

  constructor(limits: EventStoreLimits = {}) {
    this.perList = limits.perList ?? 1_000;
    this.maxLists = limits.lists ?? 32;
  }

  /**
   * Merges one publication of `origin` (its lists, as read); returns what changed, by list.
   * `defaults` fill in what a kind's events leave out (their job, and the node as lane).
   */
  merge(origin: string, lists: unknown, defaults: { job?: string; lane?: string } = {}): EventListView[] {
    if (!NAME.test(origin) || typeof lists !== 'object' || lists === null) return [];
    const changed: EventListView[] = [];
    for (const [list, raw] of Object.entries(lists)) {
      if (!NAME.test(list) || !Array.isArray(raw)) continue;
      const fresh: TimedEvent[] = [];
      let held: Held | undefined;
      let floor = -Infinity;
      for (const item of raw.slice(-MAX_PER_PUBLICATION)) {
        const event = cleanEvent(item, defaults);
        if (!event) continue;
        if (!held) {
          held = this.list(origin, list);
          // A full list takes no event older than all it holds (one it dropped, published again).
          if (held.ring.size >= this.perList) floor = Math.min(...held.ring.list().map((e) => e.at));
        }
        const json = JSON.stringify(event);
        if (held.seen.get(event.id) === json || (!held.seen.has(event.id) && event.at < floor)) continue;
        held.ring.put(event);
        held.seen.set(event.id, json);
        fresh.push(event);
      }
      if (!held || fresh.length === 0) continue;
      this.touch(held);
      if (held.seen.size > held.ring.size) {
        const kept = new Set(held.ring.list().map((e) => e.id));
        for (const id of held.seen.keys()) if (!kept.has(id)) held.seen.delete(id);
      }
      changed.push({ origin, list, events: fresh });
    }
    return changed;
  }

  all(): EventListView[] {
    return [...this.held.values()].map((h) => ({ origin: h.origin, list: h.list, events: h.ring.list() }));
  }

  private list(origin: string, list: string): Held {
    return this.held.get(keyOf(origin, list)) ?? { origin, list, ring: new EventRing(this.perList), seen: new Map() };
  }

  /** A list that changed goes last (the map's order is the order of changes); the one changed longest ago goes first. */
  private touch(held: Held): void {
    const key = keyOf(held.origin, held.list);
    this.held.delete(key);
    this.held.set(key, held);
    while (this.held.size > this.maxLists) this.held.delete(this.held.keys().next().value!);
  }
}

function keyOf(origin: string, list: string): string {
  return `${origin}\u0000${list}`;
}

/** A well-formed event from untrusted input, or null. */
export function cleanEvent(raw: unknown, defaults: { job?: string; lane?: string } = {}): TimedEvent | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const id = typeof r.id === 'string' || (typeof r.id === 'number' && Number.isFinite(r.id)) ? String(r.id).slice(0, MAX_TEXT) : '';
  if (!id || !finite(r.at)) return null;
  const event: TimedEvent = { id, at: r.at };
  if (finite(r.end) && r.end >= r.at) event.end = r.end;
  if (r.open === true && event.end !== undefined) event.open = true;
  const lane = text(r.lane) ?? (event.end !== undefined ? defaults.lane : undefined);
  if (lane !== undefined) event.lane = lane;
  const label = text(r.label);
  if (label !== undefined) event.label = label;
  const job = defaults.job ?? text(r.job);
  if (job !== undefined) event.job = job;
  if (typeof r.values === 'object' && r.values !== null) {
    const values = Object.entries(r.values as Record<string, unknown>).filter((e): e is [string, number] => NAME.test(e[0]) && finite(e[1])).slice(0, MAX_VALUES);
    if (values.length > 0) event.values = Object.fromEntries(values);
  }
  return event;
}

function finite(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

function text(x: unknown): string | undefined {
  return typeof x === 'string' && x.length > 0 ? x.slice(0, MAX_TEXT) : undefined;
}
