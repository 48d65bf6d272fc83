/**
 * The live spot replay's state machine under simulated time (spot-feed.ts): price points replayed at
 * the chosen speed, the interruption notice when the price reaches the threshold, the instances taken
 * at the notice's end, usable again when the price is below; and the feed's lines as EC2 reports them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EC2_NOTICE_MS, parseSpotPrice, SpotReplay } from '../../../../src/frameworks/malleable/manager/spot-feed.js';

const H = 3_600_000;
const T0 = Date.parse('2010-02-16T00:00:00Z');

describe('spot price feed: replay at a speed, notice, take, clear', () => {
  it('replays points at speed 3600 (an hour a second) and notices at the threshold, 2 minutes of trace time ahead', () => {
    const r = new SpotReplay(1_000, { threshold: 0.0405, speed: 3600 });
    assert.equal(r.noticeMs, EC2_NOTICE_MS / 3600);
    for (const [h, price] of [[0, 0.04], [1, 0.038], [2.5, 0.041], [3, 0.038], [5, 0.042]] as const) r.push({ time: T0 + h * H, price }, 0);
    assert.deepEqual(r.advance(999), [], 'nothing before the first point\'s replay time');
    assert.deepEqual(r.advance(1_000), [{ type: 'clear', price: 0.04, traceTime: T0 }]);
    assert.equal(r.nextWake(), 2_000, 'the next point, an hour of trace later');
    assert.deepEqual(r.advance(2_000), [], 'still below: nothing to do');
    assert.deepEqual(r.advance(3_500), [{ type: 'notice', price: 0.041, traceTime: T0 + 2.5 * H, takeAt: 3_500 + 120_000 / 3600 }]);
    assert.equal(r.current, 'noticed');
    assert.equal(r.nextWake(), 3_500 + 120_000 / 3600, 'the notice ends before the next point');
    assert.deepEqual(r.advance(3_600), [{ type: 'take' }], 'taken at the notice\'s end (the price was still above)');
    assert.deepEqual(r.advance(4_000), [{ type: 'clear', price: 0.038, traceTime: T0 + 3 * H }], 'usable again below the threshold');
    assert.deepEqual(r.advance(6_000), [{ type: 'notice', price: 0.042, traceTime: T0 + 5 * H, takeAt: 6_000 + 120_000 / 3600 }]);
    assert.equal(r.nextWake(), 6_000 + 120_000 / 3600);
  });

  it('a price that falls during the notice does not cancel it: taken at its end, then usable (a given notice in real time)', () => {
    const r = new SpotReplay(0, { threshold: 0.5, speed: 60, noticeMs: 5_000 });
    r.push({ time: T0, price: 0.4 }, 0);
    r.push({ time: T0 + 60_000, price: 0.6 }, 0); // replayed at 1 s
    r.push({ time: T0 + 120_000, price: 0.3 }, 0); // at 2 s, inside the notice
    assert.deepEqual(r.advance(0).map((a) => a.type), ['clear']);
    assert.deepEqual(r.advance(2_000), [{ type: 'notice', price: 0.6, traceTime: T0 + 60_000, takeAt: 6_000 }]);
    assert.equal(r.current, 'noticed', 'the lower price inside the notice changes nothing yet');
    assert.deepEqual(r.advance(6_000), [{ type: 'take' }, { type: 'clear', price: 0.3, traceTime: T0 + 120_000 }]);
  });

  it('a first price at the threshold keeps the spot nodes out (no notice: nothing ran there); out-of-order points are refused', () => {
    const r = new SpotReplay(undefined, { threshold: 0.5, speed: 1 });
    assert.equal(r.nextWake(), Infinity, 'nothing to do before the first price');
    r.push({ time: T0, price: 0.7 }, 500);
    assert.equal(r.replayAt({ time: T0, price: 0.7 }), 500, 'without a start, the first price is replayed when it arrives');
    assert.deepEqual(r.advance(500), []);
    assert.equal(r.current, 'taken');
    assert.throws(() => r.push({ time: T0 - 1, price: 0.1 }, 600), /comes after one at 2010-02-16T00:00:00\.000Z: a feed is in time order/);
    assert.throws(() => new SpotReplay(0, { threshold: 1, speed: 0 }), /speed must be above 0/);
  });

  it('reads EC2\'s price records (2010 console export and describe-spot-price-history) and refuses others by file:line', () => {
    assert.deepEqual(parseSpotPrice('{"instanceType":"m1.small","productDescription":"Linux/UNIX","spotPrice":0.041,"timestamp":"2010-02-16T10:54:43.000Z","epochtime":1266317683000}', 'f:1'), { time: 1266317683000, price: 0.041 });
    assert.deepEqual(parseSpotPrice('{"Timestamp":"2024-05-01T10:00:00+00:00","SpotPrice":"0.041000","InstanceType":"m5.large","ProductDescription":"Linux/UNIX","AvailabilityZone":"us-east-1a"}', 'f:2'), { time: Date.parse('2024-05-01T10:00:00Z'), price: 0.041 });
    assert.equal(parseSpotPrice('# CA m1.small', 'f:3'), null);
    assert.throws(() => parseSpotPrice('{"spotPrice":"cheap","timestamp":"2010-02-16T10:54:43Z"}', 'f:4'), { message: 'f:4: "spotPrice" (or "SpotPrice") must be a price in USD per hour, got "cheap"' });
    assert.throws(() => parseSpotPrice('{"spotPrice":0.1,"timestamp":"yesterday"}', 'f:5'), { message: 'f:5: "timestamp" (or "epochtime", "Timestamp") must be an ISO 8601 time or milliseconds since the epoch, got "yesterday"' });
    assert.throws(() => parseSpotPrice('{"spotPrice":0.1,"epochtime":1,"price":2}', 'f:6'), /^FeedLineError: f:6: a price change has .* not "price"$/);
  });
});
