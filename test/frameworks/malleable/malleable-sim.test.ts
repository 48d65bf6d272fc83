/**
 * The malleable kind's protocol under a simulated network (sim-cluster.ts): messages delivered in a
 * seeded random order, requests arriving mid-iteration, shrink, expand, a crash of a member and of
 * the leader, a vacate of a crashed node — for each seed the result equals a plain sequential Jacobi
 * bit for bit, and no object is lost or held twice (the leader checks both before it finishes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import stencil from '../../../src/frameworks/malleable/apps/stencil2d.js';
import type { GridResult } from '../../../src/frameworks/malleable/apps/grid-blocks.js';
import type { MalleableOutcome, MalleableRuntimeOptions } from '../../../src/frameworks/malleable/runtime-options.js';
import { plainStencil } from './plain-grids.js';
import { PlacementLog, SimCluster } from './sim-cluster.js';

const params = { grid: 20, blocks: 4, iterations: 30 };
const expected = plainStencil(20, 30, 4).checksum;

async function scenario(seed: number, crashLeader: boolean, opts: { threads?: number; runtime?: MalleableRuntimeOptions; hook?: (sim: SimCluster) => void } = {}) {
  const runtime: MalleableRuntimeOptions = { checkpointEvery: 5, loads: 'uniform', syncEvery: seed % 2 === 1 ? 3 : 1, ...opts.runtime };
  const sim = new SimCluster(seed, stencil, { params, runtime }, ['a', 'b', 'c'], { threads: opts.threads ?? 1 });
  const acks: unknown[] = [];
  const done = new Set<string>();
  const once = (name: string, at: number, it: number, act: () => void) => {
    if (it >= at && !done.has(name)) {
      done.add(name);
      act();
    }
  };
  const ask = (type: string, body: unknown) => void sim.request(type, body).then((a) => acks.push(a), () => acks.push('rejected'));
  const outcome = await sim.run(async () => {
    opts.hook?.(sim);
    const { iteration } = await sim.progress();
    once('shrink', 4 + (seed % 3), iteration, () => ask('rescale', { nodes: 2 }));
    once('expand', 10, iteration, () => {
      sim.join('d');
      sim.join('e');
      ask('rescale', { nodes: 4 });
    });
    once('crash', 16 + (seed % 4), iteration, () => {
      const members = [...sim.roles.keys()].filter((n) => crashLeader === (n === sim.leaderId));
      const victim = members[seed % members.length]!;
      sim.crash(victim);
      if (!crashLeader) ask('vacate', { node: victim });
    });
  });
  return { sim, outcome, acks };
}

describe('the malleable protocol on a simulated network', () => {
  it('is exact through shrink, expand, a member crash and a vacate, whatever the delivery order (12 seeds)', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { outcome, acks, sim } = await scenario(seed, false);
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const value = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(value.result.checksum, expected, `seed ${seed}: bit-identical`);
      assert.ok(value.stats.rollbacks >= 1, `seed ${seed}: rolled back after the crash`);
      const kinds = acks.map((a) => (a as { kind?: string }).kind);
      assert.ok(kinds.includes('shrink') && kinds.includes('expand'), `seed ${seed}: a shrink and an expand acknowledged (${JSON.stringify(kinds)})`);
      for (const [id, role] of sim.roles) assert.ok(role.hosted().length <= 16, `${id} holds at most every object`);
      // Every checkpoint is discarded once superseded (the last once the result is written); only a part whose
      // writer crashed before its answer arrived may remain.
      await new Promise((r) => setImmediate(r));
      assert.ok(sim.blobs.size <= 1, `seed ${seed}: ${sim.blobs.size} checkpoint blobs left after ${value.stats.checkpoints} checkpoints`);
    }
  });

  it('is exact when the leader crashes: the next one resumes from the durable checkpoint (6 seeds)', async () => {
    for (let seed = 21; seed <= 26; seed++) {
      const { outcome, sim } = await scenario(seed, true);
      assert.equal(outcome.status, 'done', `seed ${seed}`);
      assert.equal((outcome as { value: MalleableOutcome<GridResult> }).value.result.checksum, expected, `seed ${seed}: bit-identical`);
      assert.notEqual(sim.leaderId, 'a', `seed ${seed}: another node leads`);
    }
  });

  it('a rescale that lets the leader\'s own node go: the job goes on from the checkpoint elsewhere and never takes the node back (6 seeds)', async () => {
    for (let seed = 31; seed <= 36; seed++) {
      const sim = new SimCluster(seed, stencil, { params, runtime: { checkpointEvery: 5, loads: 'uniform' } }, ['a', 'b', 'c']);
      let ack: unknown;
      let asked = false;
      const outcome = await sim.run(async () => {
        if (asked || (await sim.progress()).iteration < 3) return;
        asked = true;
        void sim.request('rescale', { nodes: ['b', 'c'] }).then((a) => (ack = a));
      });
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const value = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(value.result.checksum, expected, `seed ${seed}: bit-identical`);
      assert.deepEqual((ack as { kind: string; nodes: string[] }).nodes, ['b', 'c'], `seed ${seed}: acknowledged with the kept nodes`);
      assert.ok(!sim.roles.has('a') && sim.leaderId !== 'a', `seed ${seed}: the old leader's node left the job`);
      assert.deepEqual(value.stats.rescales.filter((r) => r.kind !== 'none').map((r) => [r.kind, r.nodes]), [['shrink', ['b', 'c']]], `seed ${seed}: the shrink is in the stats (kept by the durable state across the leader change), and no rescale took a back`);
    }
  });

  it('a node that joins and leaves again before the expand takes it: the expand goes on without it, no rollback (6 seeds)', async () => {
    for (let seed = 61; seed <= 66; seed++) {
      const sim = new SimCluster(seed, stencil, { params, runtime: { checkpointEvery: 5, loads: 'uniform' } }, ['a', 'b']);
      let joined = false;
      let left = false;
      sim.onCommand = (to, type) => {
        if (to !== 'c' || left) return;
        assert.equal(type, 'configure', `seed ${seed}: the first command to a joiner`);
        left = true;
        sim.leave('c'); // taken back at once, before it answered
      };
      const outcome = await sim.run(async () => {
        if (!joined && (await sim.progress()).iteration >= 4) {
          joined = true;
          sim.join('c'); // given to the job without a request: the leader expands onto it at its next sync point
        }
      });
      assert.ok(left, `seed ${seed}: the leader tried to take c`);
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const value = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(value.result.checksum, expected, `seed ${seed}: bit-identical`);
      assert.equal(value.stats.rollbacks, 0, `seed ${seed}: the node that left held nothing; nothing rolled back`);
      assert.ok(value.stats.nodesPerIteration.every((n) => n === 2), `seed ${seed}: ran on a and b throughout`);
    }
  });

  it('is exact with 2 and 3 object threads per node, objects balanced over threads by measured load (RefineLB and GreedyLB): shrink, expand, a crash, a vacate (8 seeds)', async () => {
    for (let seed = 41; seed <= 48; seed++) {
      // Where each object has been: node and thread, as the members say between deliveries.
      const log = new PlacementLog();
      const hook = (sim: SimCluster) => log.record(sim);
      const threads = 2 + (seed % 2);
      const strategy = seed % 3 === 0 ? 'greedy' : 'refine';
      const { outcome, acks, sim } = await scenario(seed, seed % 4 === 0, { threads, runtime: { loads: 'measured', lbEvery: 3, strategy }, hook });
      assert.equal(outcome.status, 'done', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const value = (outcome as { value: MalleableOutcome<GridResult> }).value;
      assert.equal(value.result.checksum, expected, `seed ${seed} (${threads} threads per node): bit-identical`);
      if (seed % 4 === 0) assert.notEqual(sim.leaderId, 'a', `seed ${seed}: another node leads after the leader's crash`);
      else {
        assert.ok(value.stats.rollbacks >= 1, `seed ${seed}: rolled back after the crash`);
        assert.ok(acks.some((a) => (a as { kind?: string }).kind === 'expand'), `seed ${seed}: an expand acknowledged`);
      }
      const places = log.places();
      // At the start the blocks are spread over every thread of the three nodes.
      assert.ok(places.size >= 3 * threads, `seed ${seed}: objects ran on ${[...places].join(' ')}`);
      for (const role of sim.roles.values()) for (const [, thread] of role.placement()) assert.ok(thread < threads);
    }
  });

  it('the same seed gives the same run (one thread per node, and three)', async () => {
    for (const threads of [1, 3]) {
      const a = await scenario(7, false, { threads });
      const b = await scenario(7, false, { threads });
      assert.equal(a.sim.delivered, b.sim.delivered);
      assert.deepEqual(a.acks.map((x) => (x as { nodes?: string[] }).nodes), b.acks.map((x) => (x as { nodes?: string[] }).nodes));
    }
  });
});
