/**
 * The spot replay (spot-feed.ts) on the real clock, from the arrival of the feed's first price: reads
 * the feed as it arrives, wakes at each replay time and hands the actions to `apply` in order (one at a time). Resolves when the feed has
 * ended and every point and notice in it has been replayed, or when stopped.
 */
import type { Readable } from 'node:stream';
import { followLines, type FeedLineError } from '../../../util/line-feed.js';
import { parseSpotPrice, SpotReplay, type SpotAction, type SpotReplayOptions } from './spot-feed.js';

export class LiveSpotFeed {
  readonly replay: SpotReplay;
  private timer: NodeJS.Timeout | undefined;
  private applying: Promise<void> = Promise.resolve();
  private stopped = false;
  private ended = false;
  private resolveDone: (() => void) | undefined;
  readonly done: Promise<void>;

  constructor(opts: SpotReplayOptions, private readonly apply: (a: SpotAction) => Promise<void>, private readonly now: () => number = Date.now) {
    this.replay = new SpotReplay(undefined, opts);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /** Follows `input` to its end; a malformed or out-of-order line goes to `refuse` and is skipped. */
  async follow(input: Readable, name: string, refuse: (err: FeedLineError | Error) => void): Promise<void> {
    await followLines(input, name, parseSpotPrice, async (p) => {
      try {
        this.replay.push(p, this.now());
      } catch (err) {
        return refuse(new Error(`${name}: ${(err as Error).message}; skipped`));
      }
      this.wake();
    }, refuse);
    this.ended = true;
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.resolveDone?.();
  }

  private wake(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const actions = this.replay.advance(this.now());
    for (const a of actions) this.applying = this.applying.then(() => (this.stopped ? undefined : this.apply(a)));
    const next = this.replay.nextWake();
    if (next === Infinity) {
      if (this.ended) void this.applying.then(() => this.resolveDone?.());
      return;
    }
    // The replay's own schedule (trace time at the chosen speed), not a synchronization.
    this.timer = setTimeout(() => this.wake(), Math.max(0, next - this.now()));
  }
}
