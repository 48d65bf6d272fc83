/**
 * A live spot-price feed (`tidepool manager --price-feed FILE|-`): a spot price history replayed in real
 * time at a chosen speed drives the spot policy of "Towards Realizing the Potential of Malleable Jobs"
 * (Gupta, Acun, Sarood, Kalé, §VII-B) on the cluster's spot nodes — usable while the price is below the
 * threshold; when it reaches the threshold the cloud gives its interruption notice (2 minutes on EC2)
 * and takes the instances at its end, so the manager vacates them at once (a warning with the notice's
 * end as the predicted failure) and gives them to no job until the price falls below again.
 *
 * Lines, one price change each, in time order, as EC2 reports them — the 2010 console export's
 * `priceChange` records or `aws ec2 describe-spot-price-history` records (blank lines and `#` skipped):
 *
 *     {"instanceType": "m1.small", "productDescription": "Linux/UNIX", "spotPrice": 0.041, "timestamp": "2010-02-16T10:54:43.000Z", "epochtime": 1266317683000}
 *     {"Timestamp": "2024-05-01T10:00:00+00:00", "SpotPrice": "0.041000", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "AvailabilityZone": "us-east-1a"}
 *
 * The replay is a state machine apart from I/O (SpotReplay): told price points and the time, it says
 * what to do (notice, take, clear) and when it next needs to be woken.
 */
import { FeedLineError, jsonObjectLine, type LineShape } from '../../../util/line-feed.js';

/** EC2's interruption notice. */
export const EC2_NOTICE_MS = 120_000;

export interface SpotPrice { time: number; price: number }

const PRICE: LineShape = {
  what: 'a price change', shape: '{"spotPrice": …, "timestamp": …} or {"SpotPrice": …, "Timestamp": …}',
  fields: ['instanceType', 'productDescription', 'spotPrice', 'timestamp', 'epochtime', 'availabilityZone', 'InstanceType', 'ProductDescription', 'SpotPrice', 'Timestamp', 'AvailabilityZone'],
};

/** One line of a price feed: a price change, null for a blank or comment line; throws FeedLineError naming `where` (file:line). */
export function parseSpotPrice(line: string, where: string): SpotPrice | null {
  const v = jsonObjectLine(line, where, PRICE);
  if (v === null) return null;
  const fail = (message: string) => new FeedLineError(`${where}: ${message}`);
  const rawPrice = v.spotPrice ?? v.SpotPrice;
  const price = typeof rawPrice === 'number' ? rawPrice : typeof rawPrice === 'string' && rawPrice.trim() !== '' ? Number(rawPrice) : NaN;
  if (!(price >= 0)) throw fail(`"spotPrice" (or "SpotPrice") must be a price in USD per hour, got ${JSON.stringify(rawPrice)}`);
  const stamp = v.epochtime ?? v.timestamp ?? v.Timestamp;
  const time = typeof stamp === 'number' ? stamp : typeof stamp === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(stamp) ? Date.parse(stamp) : NaN;
  if (!Number.isFinite(time)) throw fail(`"timestamp" (or "epochtime", "Timestamp") must be an ISO 8601 time or milliseconds since the epoch, got ${JSON.stringify(stamp)}`);
  return { time, price };
}

/** What the replay says to do, at a moment of real time (ms). */
export type SpotAction =
  /** The price reached the threshold: the spot nodes are taken at `takeAt` (real ms); vacate them now. */
  | { type: 'notice'; price: number; traceTime: number; takeAt: number }
  /** The notice is over: the cloud has taken the spot nodes. */
  | { type: 'take' }
  /** The price is below the threshold (again): the spot nodes may run jobs. */
  | { type: 'clear'; price: number; traceTime: number };

export interface SpotReplayOptions {
  /** The price from which spot nodes are not kept (USD per hour). */
  threshold: number;
  /** Trace time per real time (3600: an hour of history a second). */
  speed: number;
  /** The interruption notice in real ms (default: EC2's 2 minutes of trace time at this speed). */
  noticeMs?: number;
}

type State = 'unknown' | 'usable' | 'noticed' | 'taken';

/**
 * The replay's state machine. Points are fed in trace order (`push`); `advance(now)` applies every point
 * whose replay time has come and the end of a notice, returning the actions in order; `nextWake()` is
 * the real time it must be called at next. The first point's trace time is replayed at `start`, or
 * (without one) when it is pushed: a feed read from a pipe starts when its first price arrives.
 * States: unknown (before the first point: spot nodes unused) → usable (price below) → noticed (price
 * reached the threshold; the nodes are being vacated) → taken (the notice ended) → usable when the price
 * is below again; a first price at or above the threshold goes from unknown to taken at once. A price that falls below during a notice does not cancel it (the cloud takes the
 * instances all the same); the clear comes when the notice ends.
 */
export class SpotReplay {
  private readonly pending: SpotPrice[] = [];
  private state: State = 'unknown';
  private takeAt = Infinity;
  private lastPrice: SpotPrice | undefined;
  private origin: number | undefined;
  readonly noticeMs: number;

  constructor(private start: number | undefined, private readonly opts: SpotReplayOptions) {
    if (!(opts.speed > 0)) throw new Error(`speed must be above 0, got ${opts.speed}`);
    this.noticeMs = opts.noticeMs ?? EC2_NOTICE_MS / opts.speed;
  }

  get current(): State {
    return this.state;
  }

  /** A price point of the feed, pushed at real time `now`; a point earlier than the one before is refused. */
  push(p: SpotPrice, now: number): void {
    const last = this.pending.at(-1) ?? this.lastPrice;
    if (last && p.time < last.time) throw new Error(`price at ${new Date(p.time).toISOString()} comes after one at ${new Date(last.time).toISOString()}: a feed is in time order`);
    this.origin ??= p.time;
    this.start ??= now;
    this.pending.push(p);
  }

  /** When the point `p` is replayed (real ms). */
  replayAt(p: SpotPrice): number {
    return (this.start ?? Infinity) + (p.time - (this.origin ?? p.time)) / this.opts.speed;
  }

  /** Real time of the next thing to do, or Infinity (waiting for the feed). */
  nextWake(): number {
    const next = this.pending[0];
    return Math.min(next ? this.replayAt(next) : Infinity, this.state === 'noticed' ? this.takeAt : Infinity);
  }

  advance(now: number): SpotAction[] {
    const out: SpotAction[] = [];
    for (;;) {
      const next = this.pending[0];
      const pointAt = next ? this.replayAt(next) : Infinity;
      const endAt = this.state === 'noticed' ? this.takeAt : Infinity;
      if (Math.min(pointAt, endAt) > now) break;
      if (endAt <= pointAt) {
        this.state = 'taken';
        out.push({ type: 'take' });
        if (this.lastPrice && this.lastPrice.price < this.opts.threshold) this.toUsable(this.lastPrice, out);
        continue;
      }
      this.pending.shift();
      this.lastPrice = next!;
      const below = next!.price < this.opts.threshold;
      if (below && (this.state === 'unknown' || this.state === 'taken')) this.toUsable(next!, out);
      else if (!below && this.state === 'unknown') this.state = 'taken'; // never usable yet: nothing to vacate (they were kept from jobs from the start)
      else if (!below && this.state === 'usable') {
        this.state = 'noticed';
        this.takeAt = pointAt + this.noticeMs;
        out.push({ type: 'notice', price: next!.price, traceTime: next!.time, takeAt: this.takeAt });
      }
    }
    return out;
  }

  private toUsable(p: SpotPrice, out: SpotAction[]): void {
    this.state = 'usable';
    out.push({ type: 'clear', price: p.price, traceTime: p.time });
  }
}
