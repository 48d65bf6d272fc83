/**
 * The location service's latency figures (Fig. 14) on a hand-driven clock: one probe out per remote
 * shard and batch kind, a sample per acknowledged probe, a wait sample only for a query that waited,
 * nothing measured without a clock, and probes to a departed shard dropped without a sample.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LatencyProbes } from '../../../src/frameworks/workflow/latency-probes.js';

function probes(clock?: { t: number }) {
  const samples = { queryMs: [] as number[], updateMs: [] as number[], waitMs: [] as number[] };
  return { samples, p: new LatencyProbes('me', clock ? () => clock.t : undefined, samples) };
}

describe('latency probes', () => {
  it('times one query and one update batch per remote shard at a time', () => {
    const clock = { t: 100 };
    const { samples, p } = probes(clock);
    const q = p.probe('s1', 'wf-query').probe;
    assert.equal(q, 0);
    assert.deepEqual(p.probe('s1', 'wf-query'), {}, 'a second query batch to s1 carries no probe while one is out');
    const u = p.probe('s1', 'wf-update').probe;
    assert.equal(u, 1, 'updates are probed apart from queries');
    assert.deepEqual(p.probe('me', 'wf-query'), {}, 'no probe to this member itself');
    assert.deepEqual(p.probe('s2', 'wf-done'), {}, 'only query and update batches are probed');
    clock.t = 107;
    p.acknowledged(q!);
    clock.t = 112;
    p.acknowledged(u!);
    p.acknowledged(u!); // a duplicate ack adds nothing
    assert.deepEqual(samples.queryMs, [7]);
    assert.deepEqual(samples.updateMs, [12]);
    assert.equal(p.probe('s1', 'wf-query').probe, 2, 'once answered, the next batch is probed again');
  });

  it('counts the wait of a query only when the file appeared later', () => {
    const clock = { t: 0 };
    const { samples, p } = probes(clock);
    p.asking(4);
    p.asking(5);
    clock.t = 30;
    p.answered(4, true);
    p.answered(5, false);
    p.answered(6, true); // never asked: nothing
    assert.deepEqual(samples.waitMs, [30]);
  });

  it('drops the probes to a departed shard without a sample', () => {
    const clock = { t: 0 };
    const { samples, p } = probes(clock);
    const q = p.probe('s1', 'wf-query').probe!;
    p.probe('s2', 'wf-query');
    p.peerGone('s1');
    p.acknowledged(q);
    assert.deepEqual(samples.queryMs, []);
    assert.equal(p.probe('s1', 'wf-query').probe, 2, 's1 may be probed again (a later view)');
    assert.deepEqual(p.probe('s2', 'wf-query'), {}, 's2 keeps its probe out');
  });

  it('measures nothing without a clock (simulations)', () => {
    const { samples, p } = probes();
    assert.deepEqual(p.probe('s1', 'wf-query'), {});
    p.asking(1);
    p.answered(1, true);
    assert.deepEqual(samples, { queryMs: [], updateMs: [], waitMs: [] });
  });
});
