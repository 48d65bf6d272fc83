/**
 * AME units (ame-units.ts): which members run location-service shards and dispatchers for a setting of
 * nodes, shards and dispatchers per unit, the refusals of settings that cannot be, and the engine under
 * simulated time with a setting: Montage_100 on 16 members completes with every task once and no start
 * before its inputs, only the shard members answer location queries and, decentralized, only the
 * dispatchers dispatch; AME's default (one of each per 64 nodes) on 16 members has one of each.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AME_UNITS, parseUnits, unitRoles, unitsProblem } from '../../../src/frameworks/workflow/ame-units.js';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { WorkflowEngine } from '../../../src/frameworks/workflow/workflow-engine.js';
import { SimCluster } from './sim-cluster.js';

const MONTAGE = fileURLToPath(new URL('../../data/workflows/pegasus-dax-2.1/Montage_100.xml', import.meta.url));
const members = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(3, '0')}`);

describe('AME units: shards and dispatchers per group of members', () => {
  it('roles by unit, in the view\'s member order; the default is AME\'s 64:1:1', () => {
    assert.deepEqual({ ...AME_UNITS }, { nodes: 64, shards: 1, dispatchers: 1 });
    const m = members(130);
    assert.deepEqual(unitRoles(m, AME_UNITS), { shards: ['m000', 'm064', 'm128'], dispatchers: ['m000', 'm064', 'm128'] });
    assert.deepEqual(unitRoles(members(20), { nodes: 8, shards: 2, dispatchers: 1 }), { shards: ['m000', 'm001', 'm008', 'm009', 'm016', 'm017'], dispatchers: ['m000', 'm008', 'm016'] });
    // A last unit smaller than its shard count has as many shards as members.
    assert.deepEqual(unitRoles(members(5), { nodes: 4, shards: 3, dispatchers: 4 }), { shards: ['m000', 'm001', 'm002', 'm004'], dispatchers: ['m000', 'm001', 'm002', 'm003', 'm004'] });
    assert.deepEqual(unitRoles(members(3), { nodes: 1, shards: 1, dispatchers: 1 }), { shards: members(3), dispatchers: members(3) });
  });

  it('settings that cannot be are refused naming what is wrong', () => {
    assert.deepEqual(parseUnits('16'), { nodes: 16, shards: 1, dispatchers: 1 });
    assert.deepEqual(parseUnits('32:4:2'), { nodes: 32, shards: 4, dispatchers: 2 });
    assert.throws(() => parseUnits('8:9'), /^Error: AME unit: 9 shards per unit of 8 nodes \(at most one per node\)$/);
    assert.throws(() => parseUnits('0'), /AME unit nodes must be a whole number of at least 1, got 0/);
    assert.throws(() => parseUnits('4:x'), /expected NODES\[:SHARDS\[:DISPATCHERS\]\], whole numbers \(e\.g\. 64:1:1\), got "4:x"/);
    assert.equal(unitsProblem({ nodes: 4, shards: 1, dispatchers: 5 }), 'AME unit: 5 dispatchers per unit of 4 nodes (at most one per node)');
    const io = { send() {}, run() {}, readJournal: () => ({ done: new Map(), saved: new Set<number>() }), journal() {}, finish() {}, random: () => 0.5 };
    assert.throws(() => new WorkflowEngine({} as never, 'm', io as never, { units: { nodes: 2, shards: 0, dispatchers: 1 } }), /AME unit shards must be a whole number of at least 1, got 0/);
  });

  for (const [units, mode] of [[{ nodes: 4, shards: 1, dispatchers: 1 }, 'decentralized'], [{ nodes: 8, shards: 2, dispatchers: 2 }, 'decentralized'], [AME_UNITS, 'decentralized'], [{ nodes: 4, shards: 1, dispatchers: 1 }, 'centralized']] as const) {
    it(`Montage_100 on 16 members, units ${units.nodes}:${units.shards}:${units.dispatchers}, ${mode}: only the role holders answer queries and dispatch`, async () => {
      const wf = await loadWorkflow(MONTAGE);
      const sim = new SimCluster(wf, { nodes: 16, mode, slots: 2, scale: 0.01, seed: 5, units });
      sim.start();
      sim.runUntil();
      assert.deepEqual(sim.outcome, { ok: true });
      assert.deepEqual(sim.checkOrder(), []);
      const completed = [...sim.engines.values()].reduce((n, e) => n + e.stats.completed, 0);
      assert.equal(completed, wf.tasks.length, 'every task completed once');
      const roles = unitRoles([...sim.engines.keys()].sort(), units);
      const answering = [...sim.engines].filter(([, e]) => e.shard.queries + e.shard.updates > 0).map(([id]) => id).sort();
      assert.ok(answering.length > 0 && answering.every((id) => roles.shards.includes(id)), `shards answering: ${answering.join(' ')}; shard members: ${roles.shards.join(' ')}`);
      const dispatching = [...sim.engines].filter(([, e]) => e.stats.dispatched > 0).map(([id]) => id).sort();
      const expected = mode === 'centralized' ? [sim.leader] : roles.dispatchers;
      assert.ok(dispatching.length > 0 && dispatching.every((id) => expected.includes(id)), `dispatching: ${dispatching.join(' ')}; dispatchers: ${expected.join(' ')}`);
      if (units === AME_UNITS) assert.deepEqual([answering, dispatching], [['n0'], ['n0']], 'one unit: one shard and one dispatcher');
    });
  }
});
