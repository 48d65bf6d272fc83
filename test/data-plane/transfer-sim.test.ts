/**
 * The blob transfer protocol's state machines under a simulated network: reordering, loss, holders
 * that die (silently or with failing sends), corrupt and truncated copies, refusals. Deterministic
 * per seed (TIDEPOOL_SEED=N reruns one).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/util/rng.js';
import { testSeeds } from '../support/seeds.js';
import { simulateFetch, type SimHolder } from './sim-transfer.js';

const SEEDS = testSeeds([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
const CHUNK = 1024;
const WINDOW = 4;

function blobOf(seed: number, size = 50 * CHUNK + 123): Buffer {
  const rng = new Rng(seed);
  return Buffer.from(Array.from({ length: size }, () => rng.int(0, 255)));
}

function corrupted(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}

describe('blob transfer protocol (simulated network)', () => {
  it('delivers a blob exactly under reordering, never more than a window ahead of the receiver', () => {
    for (const seed of SEEDS) {
      const blob = blobOf(seed);
      const out = simulateFetch({ seed, blob, holders: [{ id: 'a', bytes: blob }], chunkBytes: CHUNK, window: WINDOW, maxDelayMs: 50 });
      assert.equal(out.result, 'done', `seed ${seed}: ${out.error?.message}`);
      assert.ok(out.written.equals(blob), `seed ${seed}: bytes differ`);
      assert.ok(out.maxAhead <= WINDOW, `seed ${seed}: holder ran ${out.maxAhead} chunks ahead (window ${WINDOW})`);
      assert.equal(out.receiver.stats.attempts, 1, `seed ${seed}: one holder, one attempt`);
    }
  });

  it('grants credit in steps of half a window, never beyond a window past what was consumed, and never leaves the holder without credit', () => {
    for (const window of [1, 2, 3, WINDOW, 16]) {
      for (const seed of SEEDS) {
        const blob = blobOf(seed);
        const chunks = Math.ceil(blob.length / CHUNK);
        const out = simulateFetch({ seed, blob, holders: [{ id: 'a', bytes: blob }], chunkBytes: CHUNK, window, maxDelayMs: 50 });
        assert.equal(out.result, 'done', `window ${window}, seed ${seed}: ${out.error?.message}`);
        assert.ok(out.written.equals(blob), `window ${window}, seed ${seed}: bytes differ`);
        assert.ok(out.maxAhead <= window, `window ${window}, seed ${seed}: holder ran ${out.maxAhead} chunks ahead`);
        assert.equal(out.receiver.stats.attempts, 1, `window ${window}, seed ${seed}: the holder stalled for want of credit`);
        const step = Math.ceil(window / 2);
        let granted = window;
        for (const c of out.credits) {
          assert.ok(c.upTo <= c.consumed + window, `window ${window}, seed ${seed}: credit up to ${c.upTo} with ${c.consumed} consumed`);
          assert.ok(c.upTo - granted >= step || c.upTo === chunks, `window ${window}, seed ${seed}: a credit of ${c.upTo - granted} chunks (step ${step})`);
          granted = c.upTo;
        }
        // One credit per step of consumed chunks (the last may be short), where one per chunk was sent before.
        assert.ok(out.credits.length <= Math.ceil((chunks - window) / step), `window ${window}, seed ${seed}: ${out.credits.length} credits for ${chunks} chunks`);
      }
    }
  });

  it('completes despite lost messages, resuming after a stall instead of starting over', () => {
    for (const seed of SEEDS) {
      const blob = blobOf(seed);
      const out = simulateFetch({
        seed, blob, holders: [{ id: 'a', bytes: blob }, { id: 'b', bytes: blob }], chunkBytes: CHUNK, window: WINDOW, loss: 0.03,
      });
      assert.equal(out.result, 'done', `seed ${seed}: ${out.error?.message}`);
      assert.ok(out.written.equals(blob), `seed ${seed}: bytes differ`);
      assert.equal(out.receiver.stats.restarts, 0, `seed ${seed}: resumed, never restarted`);
    }
  });

  it('continues from another holder when one dies mid-transfer, silently or with failing sends', () => {
    for (const seed of SEEDS) {
      const blob = blobOf(seed);
      const dying: SimHolder = { id: 'dies', bytes: blob, diesAfterChunks: 20, loudDeath: seed % 2 === 0 };
      const out = simulateFetch({ seed, blob, holders: [dying, { id: 'lives', bytes: blob }], chunkBytes: CHUNK, window: WINDOW });
      assert.equal(out.result, 'done', `seed ${seed}: ${out.error?.message}`);
      assert.ok(out.written.equals(blob), `seed ${seed}: bytes differ`);
      const fromSurvivor = out.sentBy.get('lives') ?? 0;
      assert.ok(fromSurvivor > 0 && fromSurvivor < 51, `seed ${seed}: the survivor sent the rest (${fromSurvivor} chunks), not the whole blob`);
    }
  });

  it('rejects a corrupt copy, fetches it again from another holder and never asks the corrupt one again', () => {
    for (const seed of SEEDS) {
      const blob = blobOf(seed);
      const bad = corrupted(blob, new Rng(seed).int(0, blob.length - 1));
      const out = simulateFetch({ seed, blob, holders: [{ id: 'bad', bytes: bad }, { id: 'good', bytes: blob }], chunkBytes: CHUNK, window: WINDOW });
      assert.equal(out.result, 'done', `seed ${seed}: ${out.error?.message}`);
      assert.ok(out.written.equals(blob), `seed ${seed}: bytes differ`);
      assert.deepEqual(out.corruptReports, [['bad']]);
      assert.equal(out.receiver.stats.restarts, 1);
      assert.equal(out.receiver.stats.attempts, 2, `seed ${seed}: the corrupt holder is not asked again`);
    }
  });

  it('leaves a holder whose copy is truncated at its first chunk', () => {
    const blob = blobOf(1);
    const out = simulateFetch({ seed: 1, blob, holders: [{ id: 'short', bytes: blob.subarray(0, 10_000) }, { id: 'full', bytes: blob }], chunkBytes: CHUNK, window: WINDOW });
    assert.equal(out.result, 'done');
    assert.ok(out.written.equals(blob));
    assert.equal(out.sentBy.get('short'), WINDOW, 'only its first window was sent before it was left');
  });

  it('fails with REFUSED naming every holder when all refuse, and UNAVAILABLE when all are gone', () => {
    const blob = blobOf(2);
    const refused = simulateFetch({ seed: 2, blob, holders: [{ id: 'x', bytes: blob, refuses: true }, { id: 'y', bytes: blob, refuses: true }], chunkBytes: CHUNK, window: WINDOW });
    assert.equal(refused.result, 'failed');
    assert.equal(refused.error?.code, 'REFUSED');
    assert.match(refused.error!.message, /x: refused \(REFUSED\): receiver is not a member of job J; y: refused/);

    const gone = simulateFetch({
      seed: 3, blob, chunkBytes: CHUNK, window: WINDOW,
      holders: [{ id: 'x', bytes: blob, diesAfterChunks: 3 }, { id: 'y', bytes: blob, diesAfterChunks: 3, loudDeath: true }],
    });
    assert.equal(gone.result, 'failed');
    assert.equal(gone.error?.code, 'UNAVAILABLE');
    assert.match(gone.error!.message, /x: sent nothing for 500 ms/);
    assert.match(gone.error!.message, /y: unreachable/);
  });

  it('delivers an empty blob without asking anyone', () => {
    const out = simulateFetch({ seed: 1, blob: Buffer.alloc(0), holders: [], chunkBytes: CHUNK, window: WINDOW });
    assert.equal(out.result, 'done');
    assert.equal(out.written.length, 0);
  });
});
