/**
 * Collectives of malleable applications: reductions folded in object index order (sum, min, max and
 * an order-sensitive custom fold), broadcasts, and a convergence test — checked against the same
 * computation written as plain loops (plain-decay.ts), bit for bit: sequentially, on 1, 2 and 3 simulated
 * nodes with messages delivered in a seeded random order, across a shrink and an expand with objects
 * migrating under measured loads, and when a convergence test ends the job on members that hold no
 * object or just joined.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CollectiveBuffer, fold } from '../../../src/frameworks/malleable/collectives.js';
import { defineMalleable } from '../../../src/frameworks/malleable/malleable-app.js';
import type { MalleableOutcome, MalleableRuntimeOptions } from '../../../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../../../src/frameworks/malleable/sequential.js';
import decay, { type DecayResult } from './apps/coupled-decay.js';
import probe, { type ProbeResult } from './apps/thread-probe.js';
import { assertBitIdentical, plainDecay } from './plain-decay.js';
import { PlacementLog, SimCluster } from './sim-cluster.js';

const valueOf = (o: unknown) => (o as { value: MalleableOutcome<DecayResult> }).value;

describe('reductions and broadcasts', () => {
  it('fold in index order whatever order contributions arrive in; sum, min, max and a custom fold', () => {
    const parts = [[2, 1e16], [0, 1], [1, 1], [3, -1e16]] as const;
    const buffer = new CollectiveBuffer({ s: 'sum', lo: 'min', hi: 'max', seq: (a, b) => `${String(a)}<${String(b)}` });
    for (const [from, value] of parts) {
      buffer.add(5, { contributions: [{ name: 's', from, value }, { name: 'lo', from, value }, { name: 'hi', from, value }, { name: 'seq', from, value: from }], broadcasts: [{ from, msg: `b${from}` }] });
    }
    const view = buffer.view(5);
    // Index order: ((1 + 1) + 1e16) + -1e16 = 2; arrival order would give ((1e16 + 1) + 1) + -1e16 = 0.
    assert.equal(view.reduced.s, 2);
    assert.equal(((1e16 + 1) + 1) + -1e16, 0);
    assert.equal(view.reduced.lo, -1e16);
    assert.equal(view.reduced.hi, 1e16);
    assert.equal(view.reduced.seq, '0<1<2<3');
    assert.deepEqual(view.broadcasts.map((b) => b.msg), ['b0', 'b1', 'b2', 'b3']);
    assert.equal(fold('x', 'sum', []), undefined);
  });

  it('refuses an undeclared reduction, a second contribution, a bad resize and a bad declaration, naming them', () => {
    const app = (step: Parameters<typeof defineMalleable>[0]['step']) => defineMalleable({
      name: 'bad', objects: () => 2, iterations: () => 2, init: () => 0, step, summary: () => 0, result: () => 0, reductions: { total: 'sum' },
    });
    assert.throws(() => runSequential(app((c) => c.reduce('other', 1)), {}), /object 0 in iteration 0: reduction "other" is not declared in `reductions` \(declared: total\)/);
    assert.throws(() => runSequential(app((c) => { c.reduce('total', 1); c.reduce('total', 2); }), {}), /object 0 in iteration 0: contributed to reduction "total" twice/);
    assert.throws(() => runSequential(app((c) => c.requestResize(3, 2)), {}), /object 0 in iteration 0: requestResize\(min, max\) needs whole numbers 1 ≤ min ≤ max, got \(3, 2\)/);
    assert.throws(() => runSequential(app((c) => c.reduce('total', 'x' as never)), {}), /reduction "total": object 0 contributed string, not a number/);
    assert.throws(() => defineMalleable({ name: 'bad', objects: () => 1, iterations: () => 1, init: () => 0, step: () => 0, summary: () => 0, result: () => 0, reductions: { e: 'avg' as never } }), /reduction "e" must be "sum", "min", "max" or a function/);
  });

  it('the sequential run equals the plain loops bit for bit, and the convergence test stops both at the same iteration', () => {
    for (const p of [{ objects: 5, width: 4, iterations: 30 }, { objects: 1, width: 3, iterations: 10 }, { objects: 6, width: 3, iterations: 200, tol: 1e-9 }]) {
      const want = plainDecay(p);
      assertBitIdentical(runSequential<DecayResult>(decay, p), want, JSON.stringify(p));
      if (p.tol) assert.ok(want.steps > 10 && want.steps < 200, `converged after ${want.steps} iterations`);
    }
  });
});

describe('collectives on simulated nodes (random delivery order)', () => {
  const params = { objects: 7, width: 5, iterations: 24 };
  const want = plainDecay(params);

  it('are bit-identical on 1, 2 and 3 nodes, with sync points every iteration and every 3', async () => {
    for (const nodes of [['a'], ['a', 'b'], ['a', 'b', 'c']]) {
      for (const syncEvery of [1, 3]) {
        const sim = new SimCluster(nodes.length * 10 + syncEvery, decay, { params, runtime: { syncEvery } }, nodes);
        const outcome = await sim.run();
        assert.equal(outcome.status, 'done', JSON.stringify(outcome));
        assertBitIdentical(valueOf(outcome).result, want, `${nodes.length} node(s), syncEvery ${syncEvery}`);
      }
    }
  });

  it('are bit-identical across a shrink 3 → 2 and an expand 2 → 4, objects migrating by measured load (6 seeds)', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const runtime: MalleableRuntimeOptions = { lbEvery: 4, checkpointEvery: 6, syncEvery: seed % 2 === 0 ? 2 : 1 };
      const sim = new SimCluster(seed, decay, { params, runtime }, ['a', 'b', 'c']);
      const acks: Array<{ kind?: string }> = [];
      const done = new Set<string>();
      const outcome = await sim.run(async () => {
        const { iteration } = await sim.progress();
        if (iteration >= 5 && !done.has('shrink')) {
          done.add('shrink');
          void sim.request('rescale', { nodes: 2 }).then((a) => acks.push(a as never));
        }
        if (iteration >= 13 && !done.has('expand')) {
          done.add('expand');
          sim.join('d');
          sim.join('e');
          void sim.request('rescale', { nodes: 4 }).then((a) => acks.push(a as never));
        }
      });
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      assertBitIdentical(valueOf(outcome).result, want, `seed ${seed}`);
      assert.deepEqual(acks.map((a) => a.kind), ['shrink', 'expand'], `seed ${seed}`);
    }
  });

  it('are bit-identical while objects migrate between the threads of a node by measured load, 2 and 3 threads per node, on one node and across a shrink 2 → 1 (8 seeds)', async () => {
    // The first three objects are slower: they start on one thread, and balancing spreads them over others.
    const p = { objects: 12, width: 5, iterations: 30, heavy: 3, spinMs: 0.3 };
    const plain = plainDecay(p);
    for (let seed = 1; seed <= 8; seed++) {
      const threads = 2 + (seed % 2);
      // On one node every move is between its threads; on two, the shrink moves objects between nodes too.
      const nodes = seed <= 4 ? ['a'] : ['a', 'b'];
      const sim = new SimCluster(200 + seed, probe, { params: p, runtime: { lbEvery: 2, syncEvery: 1 + (seed % 2) } }, nodes, { threads });
      const log = new PlacementLog();
      let shrunk = nodes.length === 1;
      const outcome = await sim.run(async () => {
        log.record(sim);
        if (!shrunk && (await sim.progress()).iteration >= 15) {
          shrunk = true;
          void sim.request('rescale', { nodes: 1 });
        }
      });
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const { result, stats } = (outcome as { value: MalleableOutcome<ProbeResult> }).value;
      assertBitIdentical(result.decay, plain, `seed ${seed}, ${nodes.length} node(s) of ${threads} threads`);
      assert.equal(log.places().size, nodes.length * threads, `seed ${seed}: objects ran on every thread of every node`);
      if (nodes.length === 1) assert.ok(log.movedBetweenThreads() > 0 && stats.balancings > 0, `seed ${seed}: balancing moved objects between the node's threads`);
      else assert.deepEqual(stats.rescales.map((r) => r.kind), ['shrink'], `seed ${seed}`);
    }
  });

  it('a convergence test ends the job at the same iteration as the plain loops, with members and threads holding no object and a joiner (6 seeds)', async () => {
    const p = { objects: 3, width: 4, iterations: 400, tol: 1e-12 };
    const converged = plainDecay(p);
    for (let seed = 1; seed <= 6; seed++) {
      // Four nodes for three objects: one member never holds an object, so only the others can decide.
      // The job waits for the expand at the very iteration the test ends it before (on one node it runs without a message
      // between nodes, too fast to catch): the joiner that gets no object knows nothing of the collectives it ends on.
      const at = converged.steps;
      // And two object threads per node for even seeds: a thread holding no object knows nothing either.
      const sim = new SimCluster(100 + seed, decay, { params: p, runtime: { loads: 'uniform', syncEvery: 1 + (seed % 3), pauseAt: [at] } }, ['a', 'b', 'c', 'd'], { threads: 1 + (seed % 2) });
      let shrunk = false;
      let expanded = false;
      const outcome = await sim.run(async () => {
        const { iteration } = await sim.progress();
        if (iteration >= 10 && !shrunk) {
          shrunk = true;
          void sim.request('rescale', { nodes: 1 });
        }
        if (iteration === at && !expanded && sim.roles.size === 1) {
          expanded = true;
          for (const n of ['x', 'y', 'z']) sim.join(n);
          void sim.request('rescale', { nodes: 4 });
          void sim.request('resume', null);
        }
      });
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const { result, stats } = valueOf(outcome);
      assertBitIdentical(result, converged, `seed ${seed}`);
      assert.equal(stats.iterations, converged.steps, `seed ${seed}: the stats say how many iterations ran`);
      assert.ok(stats.rescales.some((r) => r.kind === 'expand' && r.nodes.length === 4), `seed ${seed}: expanded to 4 before converging (${JSON.stringify(stats.rescales.map((r) => r.kind))})`);
    }
  });
});
