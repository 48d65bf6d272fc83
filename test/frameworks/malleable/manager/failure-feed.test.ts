/**
 * The failure feed a predictor writes for `tidepool manager --failure-feed`: each line a warning or
 * a clear; a malformed line is refused naming file:line and the feed goes on.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { followFailureFeed, parseFailureLine, type FailurePrediction } from '../../../../src/frameworks/malleable/manager/failure-feed.js';

describe('failure feed', () => {
  it('parses warnings with and without a time, clears, and skips blank and comment lines', () => {
    assert.deepEqual(parseFailureLine('{"node":"n1","at":"2026-11-28T02:00:00Z"}', 'f:1'), { type: 'warn', node: 'n1', at: Date.UTC(2026, 10, 28, 2, 0, 0) });
    assert.deepEqual(parseFailureLine('{"node":"n1","at":1764295200000}', 'f:1'), { type: 'warn', node: 'n1', at: 1764295200000 });
    assert.deepEqual(parseFailureLine(' {"node":"n2"} ', 'f:1'), { type: 'warn', node: 'n2' });
    assert.deepEqual(parseFailureLine('{"node":"n2","clear":true}', 'f:1'), { type: 'clear', node: 'n2' });
    assert.equal(parseFailureLine('   ', 'f:1'), null);
    assert.equal(parseFailureLine('# predictor v2', 'f:1'), null);
  });

  it('refuses what is not a prediction, naming file:line', () => {
    const refused = (line: string, message: string) => assert.throws(() => parseFailureLine(line, 'feed.jsonl:7'), { message: `feed.jsonl:7: ${message}` });
    assert.throws(() => parseFailureLine('n1 soon', 'feed.jsonl:7'), /^FailureFeedError: feed\.jsonl:7: not JSON \(/); // the parser's words vary with Node's version
    refused('[1]', 'a prediction is a JSON object {"node": …, "at": …}, got [1]');
    refused('{"node":"n1","when":3}', 'a prediction has "node", "at" and "clear", not "when"');
    refused('{"at":3}', '"node" must be a node id (text without "/" or spaces), got undefined');
    refused('{"node":"a/b"}', '"node" must be a node id (text without "/" or spaces), got "a/b"');
    refused('{"node":"n1","at":"tomorrow"}', '"at" must be an ISO 8601 time (2026-11-28T02:00:00Z) or milliseconds since the epoch, got "tomorrow"');
    refused('{"node":"n1","clear":"yes"}', '"clear" must be true or false, got "yes"');
    refused('{"node":"n1","clear":true,"at":5}', 'a clear has no "at"');
  });

  it('follows a stream line by line as it arrives; a bad line is refused and the feed goes on', async () => {
    const input = new PassThrough();
    const applied: FailurePrediction[] = [];
    const refusals: string[] = [];
    let seen: () => void = () => undefined;
    const done = followFailureFeed(input, 'stdin', async (p) => {
      applied.push(p);
      seen();
    }, (err) => refusals.push(err.message));
    const next = () => new Promise<void>((resolve) => (seen = resolve));
    let arrived = next();
    input.write('{"node":"n1","at":5}\n');
    await arrived; // applied before the next line is even written: a live feed
    assert.deepEqual(applied, [{ type: 'warn', node: 'n1', at: 5 }]);
    arrived = next();
    input.write('\n{"node": n2}\n{"node":"n1","clear":true}\n');
    await arrived;
    input.end();
    await done;
    assert.deepEqual(applied, [{ type: 'warn', node: 'n1', at: 5 }, { type: 'clear', node: 'n1' }]);
    assert.equal(refusals.length, 1);
    assert.match(refusals[0]!, /^stdin:3: not JSON/);
  });
});
