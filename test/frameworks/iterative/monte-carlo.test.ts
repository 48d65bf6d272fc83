/**
 * The two Monte Carlo applications against their closed forms (within 4 standard errors; the
 * streams are seeded, so these runs are reproducible), and each run on a cluster equal bit for bit
 * to its sequential fold.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../../../src/index.js';
import slab, { slabAnswer, SLAB_DEFAULTS, type SlabTally } from '../../../src/frameworks/iterative/apps/slab.js';
import option, { blackScholes, optionAnswer, OPTION_DEFAULTS, type OptionTally } from '../../../src/frameworks/iterative/apps/option.js';
import { iterateSequentially, runIterative } from '../../../src/frameworks/iterative/run-iterative.js';
import { withDeadline } from '../../support/wait.js';

const within = (a: { estimate: number; stderr: number; exact: number }, what: string) =>
  assert.ok(Math.abs(a.estimate - a.exact) < 4 * a.stderr, `${what}: ${a.estimate} ± ${a.stderr} vs ${a.exact}`);

test('slab: uncollided transmission matches e^{-μx} within its statistical error', () => {
  for (const p of [SLAB_DEFAULTS, { thickness: 1, mu: 0.5, albedo: 0.5 }, { thickness: 3, mu: 1.2, albedo: 0.99 }]) {
    const r = iterateSequentially(slab, { iterations: 100_000, params: p });
    const t = r.value;
    assert.equal(t.histories, 100_000);
    assert.equal(t.transmitted + t.reflected + t.absorbed, t.histories, 'every history ends exactly one way');
    assert.ok(t.collisions > t.histories - t.uncollided - 1, 'histories have random lengths');
    within(slabAnswer(p, t), `slab ${JSON.stringify(p)}`);
  }
});

test('Black–Scholes closed form: the textbook values (S=K=100, r=5 %, σ=20 %, T=1) and put–call parity', () => {
  const p = { ...OPTION_DEFAULTS, spot: 100, strike: 100, rate: 0.05, volatility: 0.2, expiry: 1 };
  assert.ok(Math.abs(blackScholes({ ...p, type: 'call' }) - 10.4506) < 1e-4);
  assert.ok(Math.abs(blackScholes({ ...p, type: 'put' }) - 5.5735) < 1e-4);
  const q = OPTION_DEFAULTS;
  const parity = blackScholes({ ...q, type: 'call' }) - blackScholes({ ...q, type: 'put' }) - (q.spot - q.strike * Math.exp(-q.rate * q.expiry));
  assert.ok(Math.abs(parity) < 1e-6);
});

test('European option: the Monte Carlo price matches Black–Scholes within its statistical error', () => {
  for (const type of ['call', 'put'] as const) {
    const p = { ...OPTION_DEFAULTS, type, maxSteps: 16 };
    const r = iterateSequentially(option, { iterations: 60_000, params: p });
    assert.equal(r.value.paths, 60_000);
    assert.ok(r.value.steps > 60_000 * 4, 'paths take random numbers of steps');
    within(optionAnswer(p, r.value), `${type}`);
  }
});

test('both applications on a 2-node cluster equal their sequential fold bit for bit', async () => {
  const cluster = await Cluster.embedded({ nodes: 2, workers: 1, progressIntervalMs: 0 });
  try {
    const slabOpts = { iterations: 40_000, params: SLAB_DEFAULTS, balance: 'ruper' as const, nodes: 2 };
    const s = await withDeadline(runIterative<SlabTally, typeof SLAB_DEFAULTS>(cluster, { module: new URL('../../../src/frameworks/iterative/apps/slab.ts', import.meta.url).href, export: 'default' }, slabOpts), 'slab', 60_000);
    assert.deepEqual(s.value, iterateSequentially(slab, slabOpts).value);
    const optOpts = { iterations: 20_000, params: { ...OPTION_DEFAULTS, maxSteps: 8 }, balance: 'steal' as const, nodes: 2 };
    const o = await withDeadline(runIterative<OptionTally, typeof OPTION_DEFAULTS>(cluster, { module: new URL('../../../src/frameworks/iterative/apps/option.ts', import.meta.url).href, export: 'default' }, optOpts), 'option', 60_000);
    assert.deepEqual(o.value, iterateSequentially(option, optOpts).value);
  } finally {
    await cluster.close();
  }
});
