import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCrosbyJson, parsePauleyTsv } from '../../../../src/frameworks/malleable/manager/traces/spot-price-trace.js';
import { priceSensitiveRun } from '../../../../src/frameworks/malleable/manager/traces/spot-rescale.js';

const H = 3_600_000;

describe('spot price traces', () => {
  it('parses the 2010 console export (one JSON object a line) into time-ordered markets', () => {
    const text = [
      '{"requests":{},"priceChange":[{"instanceType":"m1.small","productDescription":"Linux/UNIX","spotPrice":0.031,"timestamp":"x","epochtime":2000},',
      '{"instanceType":"m1.small","productDescription":"Linux/UNIX","spotPrice":0.029,"timestamp":"x","epochtime":1000}]}',
    ].join('');
    const text2 = `${text}\n\n{"priceChange":[{"instanceType":"c1.medium","productDescription":"Linux/UNIX","spotPrice":0.1,"epochtime":500}]}\n`;
    assert.deepEqual(parseCrosbyJson(text2, 'CA.json', 'CA'), [
      { market: 'CA/c1.medium/Linux/UNIX', points: [{ time: 500, price: 0.1 }] },
      { market: 'CA/m1.small/Linux/UNIX', points: [{ time: 1000, price: 0.029 }, { time: 2000, price: 0.031 }] },
    ]);
    assert.throws(() => parseCrosbyJson('{"priceChange":[]}\n{oops', 'CA.json', 'CA'), /^TraceError: CA\.json:2: not JSON/);
    assert.throws(() => parseCrosbyJson('{"priceChange":[{"instanceType":"a","productDescription":"b","spotPrice":"1","epochtime":1}]}', 'f.json', 'X'), /f\.json:1: priceChange\[0\]\.spotPrice: not a price/);
  });

  it('parses the 2022 TSV and names file, line and field of a bad row', () => {
    const tsv = 'use1-az1\tm5.large\tLinux/UNIX\t0.040000\t2022-05-31T18:00:00+00:00\nuse1-az1\tm5.large\tLinux/UNIX\t0.050000\t2022-05-31T19:30:00+00:00\n';
    assert.deepEqual(parsePauleyTsv(tsv, 'm.tsv'), [{ market: 'use1-az1/m5.large/Linux/UNIX', points: [{ time: Date.parse('2022-05-31T18:00:00Z'), price: 0.04 }, { time: Date.parse('2022-05-31T19:30:00Z'), price: 0.05 }] }]);
    assert.throws(() => parsePauleyTsv(`${tsv}use1-az1\tm5.large\tLinux/UNIX\tcheap\t2022-05-31T19:30:00+00:00\n`, 'm.tsv'), /m\.tsv:3: field 4 \(price\): "cheap"/);
    assert.throws(() => parsePauleyTsv('a\tb\tc\n', 'm.tsv'), /m\.tsv:1: expected 5 tab-separated fields/);
  });

  it('charges each instance-hour the price at its start; shrinks above the threshold, expands below (hand-computed)', () => {
    // 0.30 from 0, 0.60 from 1.5 h, 0.20 from 2.25 h, 0.40 from 5 h; window [0, 6 h).
    const points = [{ time: 0, price: 0.3 }, { time: 1.5 * H, price: 0.6 }, { time: 2.25 * H, price: 0.2 }, { time: 5 * H, price: 0.4 }];
    // Threshold 0.5: hours start at 0 (.30), 1 h (.30); shrink at 1.5 h; expand at 2.25 h (.20); hours at 3.25 (.20),
    // 4.25 (.20), 5.25 h (.40). Cost 1.60 for 1.5 + 3.75 = 5.25 usable hours.
    const r = priceSensitiveRun(points, 0, 6 * H, 0.5);
    assert.deepEqual({ ...r, cost: +r.cost.toFixed(10), effectivePrice: +r.effectivePrice.toFixed(6) }, { cost: 1.6, usableHours: 5.25, effectivePrice: 0.304762, instanceHours: 6, expands: 2, shrinks: 1 });
    // Always on: hours at 0..5 h pay .30 .30 .60 .20 .20 .40 (a change at 5 h applies to the hour starting then).
    const always = priceSensitiveRun(points, 0, 6 * H, Infinity);
    assert.equal(always.cost.toFixed(10), (2).toFixed(10));
    assert.equal(always.usableHours, 6);
    // A threshold below every price: never runs, costs nothing.
    assert.deepEqual(priceSensitiveRun(points, 0, 6 * H, 0.1), { cost: 0, usableHours: 0, effectivePrice: 0, instanceHours: 0, expands: 0, shrinks: 0 });
  });
});
