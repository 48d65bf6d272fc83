/** The documented example (docs/malleable.md): particles on a ring, rescaled 3 → 1 → 3, none lost or doubled. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runParticles } from '../../../examples/malleable/run-particles.js';

describe('the malleable example', () => {
  it('counts every particle once and matches the sequential run through a shrink and an expand', { timeout: 60_000 }, async () => {
    const { result, sequential, rescales } = await runParticles();
    const n = 24 * 50;
    assert.equal(result.count, n);
    assert.equal(result.idSum, (n * (n - 1)) / 2, 'closed form: every id once');
    assert.deepEqual(result, sequential, 'same particles in the same cells as the sequential run');
    assert.deepEqual(rescales, ['shrink to 1 at 20', 'expand to 3 at 40']);
  });
});
