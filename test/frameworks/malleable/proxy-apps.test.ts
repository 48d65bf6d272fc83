/**
 * The LeanMD-like and Lulesh-like applications: their physics (atoms and momentum conserved, energy
 * nearly so, atoms migrating between cells; a blast wave moving out as t^(2/3), the same time steps
 * whatever the decomposition, energy nearly conserved) and their malleable runs — on simulated nodes
 * with messages in a seeded random order and on an embedded cluster, across shrinks and expands —
 * bit-identical to their sequential runs, the per-step energy and dt reductions included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import leanmd from '../../../src/frameworks/malleable/apps/leanmd.js';
import lulesh from '../../../src/frameworks/malleable/apps/lulesh.js';
import type { MdParams, MdResult } from '../../../src/frameworks/malleable/apps/md-cells.js';
import type { HydroResult } from '../../../src/frameworks/malleable/apps/hydro-blocks.js';
import { MALLEABLE_APPS } from '../../../src/frameworks/malleable/applications.js';
import type { AnyMalleableApp } from '../../../src/frameworks/malleable/malleable-app.js';
import type { MalleableOutcome } from '../../../src/frameworks/malleable/runtime-options.js';
import { runSequential } from '../../../src/frameworks/malleable/sequential.js';
import { submitMalleable } from '../../../src/frameworks/malleable/submit.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { withDeadline } from '../../support/wait.js';
import { SimCluster } from './sim-cluster.js';

const md: MdParams = { cells: [3, 3, 3], atomsPerSide: 2, steps: 12, dt: 0.01 };
const hydro = { elements: 240, blocks: 6, steps: 60 };
const totalEnergy = (energies: number[]) => energies.filter((_, i) => i % 2 === 0).map((k, i) => k + energies[2 * i + 1]!);
const sameBits = (a: number[], b: number[]) => Buffer.from(Float64Array.from(a).buffer).equals(Buffer.from(Float64Array.from(b).buffer));

describe('LeanMD-like molecular dynamics', () => {
  it('conserves atoms and momentum, nearly conserves energy, and migrates atoms between cells', () => {
    const p: MdParams = { cells: [3, 3, 4], atomsPerSide: 3, steps: 150, dt: 0.004 };
    const start = runSequential<MdResult>(leanmd, { ...p, steps: 0 });
    const end = runSequential<MdResult>(leanmd, p);
    assert.equal(end.atoms, 3 * 3 * 4 * 27);
    assert.equal(start.moved, 0);
    assert.ok(end.moved > 20, `atoms changed cells (${end.moved})`);
    for (let d = 0; d < 3; d++) assert.ok(Math.abs(end.momentum[d]! - start.momentum[d]!) < 1e-9, `momentum ${d}: ${start.momentum[d]} → ${end.momentum[d]}`);
    const energy = totalEnergy(end.energies);
    assert.equal(energy.length, 150);
    // Kinetic energy is taken at half steps (leapfrog): the sum fluctuates by O(dt), and must not drift.
    const drift = Math.abs(energy.at(-1)! - energy[0]!) / Math.abs(energy[0]!);
    assert.ok(drift < 0.02, `energy drift ${drift}`);
  });

  it('refuses bad parameters naming the field', () => {
    assert.throws(() => runSequential(leanmd, { ...md, cells: [2, 3, 3] }), /"cells" must be three whole numbers ≥ 3, got \[2,3,3\]/);
    assert.throws(() => runSequential(leanmd, { ...md, dt: 1 }), /"dt" must be a number in \(0, 0.02\]/);
  });
});

describe('Lulesh-like hydrodynamics', () => {
  it('a blast wave moves out as t^(2/3) with the same time steps whatever the decomposition; energy nearly conserved', () => {
    const runs = [1, 3, 8].map((blocks) => runSequential<HydroResult>(lulesh, { elements: 400, blocks, steps: 800 }));
    for (const r of runs.slice(1)) {
      assert.equal(r.time, runs[0]!.time, 'the same time reached: every dt is the same global minimum');
      assert.deepEqual(r.shock, runs[0]!.shock);
      assert.ok(sameBits(r.history.filter((_, i) => i % 2 === 0), runs[0]!.history.filter((_, i) => i % 2 === 0)), 'the same dt at every step');
    }
    const early = runSequential<HydroResult>(lulesh, { elements: 400, blocks: 4, steps: 200 });
    const late = runs[0]!;
    const predicted = early.shock[0] * (late.time / early.time) ** (2 / 3);
    assert.ok(Math.abs(late.shock[0] - predicted) / predicted < 0.15, `shock at ${late.shock[0]}, planar Sedov predicts ${predicted.toFixed(1)}`);
    assert.ok(late.shock[1] > 5 && late.shock[1] < 6.5, `strong-shock compression near (γ+1)/(γ−1) = 6: ${late.shock[1]}`);
    const energy = late.history.filter((_, i) => i % 2 === 1);
    assert.ok(Math.abs(energy.at(-1)! - 1) < 0.05, `total energy stays near the blast's 1: ${energy.at(-1)}`);
  });

  it('refuses bad parameters naming the field', () => {
    assert.throws(() => runSequential(lulesh, { elements: 10, blocks: 6, steps: 1 }), /"elements" must be a whole number ≥ 2 × blocks \(12\), got 10/);
  });
});

describe('LeanMD and Lulesh on simulated nodes (random delivery order)', () => {
  const cases: Array<{ app: AnyMalleableApp; params: unknown; objects: number }> = [
    { app: leanmd, params: md, objects: 27 + 378 },
    { app: lulesh, params: hydro, objects: 6 },
  ];
  for (const { app, params, objects } of cases) {
    it(`${app.name}: bit-identical to its sequential run across a shrink 3 → 2 and an expand 2 → 3, balancing by measured load (4 seeds)`, async () => {
      assert.equal(app.objects(params), objects);
      const want = JSON.stringify(runSequential(app, params));
      const iterations = app.iterations(params);
      for (let seed = 1; seed <= 4; seed++) {
        const sim = new SimCluster(seed, app, { params, runtime: { lbEvery: 5, checkpointEvery: 7, syncEvery: seed % 2 === 0 ? 2 : 1, pauseAt: [Math.floor(iterations / 2)] } }, ['a', 'b', 'c']);
        const acks: string[] = [];
        let shrunk = false;
        let expanded = false;
        const outcome = await sim.run(async () => {
          const { iteration } = await sim.progress();
          if (iteration >= 4 && !shrunk) {
            shrunk = true;
            void sim.request('rescale', { nodes: 2 }).then((a) => acks.push((a as { kind: string }).kind));
          }
          if (iteration === Math.floor(iterations / 2) && !expanded && sim.roles.size === 2) {
            expanded = true;
            sim.join('d');
            void sim.request('rescale', { nodes: 3 }).then((a) => acks.push((a as { kind: string }).kind));
            void sim.request('resume', null);
          }
        });
        assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
        assert.equal(JSON.stringify((outcome as { value: MalleableOutcome }).value.result), want, `seed ${seed}: bit-identical`);
        assert.deepEqual(acks, ['shrink', 'expand'], `seed ${seed}`);
      }
    });
  }
});

describe('LeanMD and Lulesh on an embedded cluster', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await Cluster.embedded({ nodes: 4, workers: 1, progressIntervalMs: 0 });
  });
  after(async () => {
    await cluster.close();
  });

  for (const [name, params, shrinkAt, expandAt] of [['leanmd', md, 9, 21], ['lulesh', hydro, 30, 80]] as const) {
    it(`${name} (built in): shrink 4 → 2 and expand 2 → 4 with balancing, bit-identical to its sequential run`, { timeout: 120_000 }, async () => {
      const job = await submitMalleable(cluster, MALLEABLE_APPS[name]!, params, { nodes: 4, maxNodes: 4, runtime: { lbEvery: 6, rescaleAt: [{ iteration: shrinkAt, nodes: 2 }, { iteration: expandAt, nodes: 4 }] } });
      const { result, stats } = await withDeadline(job.result(), 'the result', 90_000);
      const app = name === 'leanmd' ? leanmd : lulesh;
      assert.equal(JSON.stringify(result), JSON.stringify(runSequential(app, params)), 'bit-identical, the reductions\' history included');
      assert.deepEqual(stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['shrink', shrinkAt, 2], ['expand', expandAt, 4]]);
    });
  }
});
