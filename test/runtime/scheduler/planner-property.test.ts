import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fcfsOrder, jobBounds, type ClusterView, type Decision, type JobState, type NodeState } from '../../../src/runtime/scheduler/cluster-view.js';
import { fcfsPolicy } from '../../../src/runtime/scheduler/fcfs-policy.js';
import { applyDecisions, plan } from '../../../src/runtime/scheduler/planner.js';
import type { SchedulingPolicy } from '../../../src/runtime/scheduler/policy.js';
import { Rng } from '../../../src/util/rng.js';
import { testSeeds } from '../../support/seeds.js';

/**
 * The planner under simulated time: random job arrivals, completions, size changes, node crashes
 * and joins; sometimes a whole plan is lost (another reconciler won the race) or a node of a finished
 * job clears its own assignment first. After every plan the invariants are checked, and each step
 * plans to a fixed point, which must be work-conserving. At the end arrivals stop and every job must
 * finish.
 */

interface SimJob extends JobState { work: number; ranFor: number }

function checkPlan(before: ClusterView, ds: readonly Decision[], policy: SchedulingPolicy, strict: boolean): ClusterView {
  const nodes = new Map(before.nodes.map((n) => [n.id, n]));
  const jobs = new Map(before.jobs.map((j) => [j.id, j]));
  const moved = new Set<string>();
  for (const d of ds) {
    assert.ok(!moved.has(d.node), `${policy.name}: node ${d.node} moved twice in one plan`);
    moved.add(d.node);
    const n = nodes.get(d.node);
    assert.ok(n, `decision for unknown node ${d.node}`);
    assert.equal(d.from, n.assignment, `decision for ${d.node} starts from its current assignment`);
    assert.ok((d.from === '') !== (d.to === ''), `a decision is an assignment or a release: ${JSON.stringify(d)}`);
    if (d.to !== '') assert.ok(jobs.get(d.to) && !jobs.get(d.to)!.finished, `${d.node} assigned to a finished or unknown job ${d.to}`);
  }
  const after = applyDecisions(before, ds);
  const count = (v: ClusterView, id: string) => v.nodes.filter((n) => n.assignment === id).length;
  for (const n of after.nodes) {
    if (n.assignment === '') continue;
    const j = jobs.get(n.assignment);
    assert.ok(j && !j.finished, `after the plan ${n.id} still holds finished/unknown job ${n.assignment}`);
  }
  const waitingBefore = fcfsOrder(before.jobs.filter((j) => !j.finished && !j.started && count(before, j.id) === 0));
  let stillWaiting = false;
  for (const j of waitingBefore) {
    const got = count(after, j.id);
    if (got > 0) {
      assert.ok(got >= jobBounds(j).min, `job ${j.id} started on ${got} < min ${j.minNodes} nodes`);
      if (strict) assert.ok(!stillWaiting, `job ${j.id} overtook an earlier waiting job under strict FCFS`);
    } else stillWaiting = true;
  }
  for (const j of before.jobs) {
    if (!j.finished) assert.ok(count(after, j.id) <= jobBounds(j).max, `job ${j.id} above its max`);
  }
  return after;
}

/** Plans and applies until nothing is left to do; then checks the fixed point is work-conserving. */
function settle(view: ClusterView, policy: SchedulingPolicy, strict: boolean): ClusterView {
  for (let round = 0; round < 4; round++) {
    const ds = plan(view, policy);
    if (ds.length === 0) {
      const idle = view.nodes.filter((n) => n.assignment === '').length;
      const count = (id: string) => view.nodes.filter((n) => n.assignment === id).length;
      for (const j of fcfsOrder(view.jobs.filter((x) => !x.finished))) {
        const { min, want } = jobBounds(j);
        const c = count(j.id);
        if (j.started || c > 0) {
          assert.ok(c === want || (c < want && idle === 0), `started job ${j.id} has ${c} of ${want} nodes with ${idle} idle`);
        } else {
          assert.ok(min > idle, `waiting job ${j.id} (min ${min}) not started with ${idle} idle nodes`);
          if (strict) break; // later waiting jobs are blocked by this one
        }
      }
      return view;
    }
    view = checkPlan(view, ds, policy, strict);
  }
  assert.fail('planning did not reach a fixed point within 4 rounds');
}

function simulate(seed: number, policy: SchedulingPolicy, strict: boolean): { finished: number; crashes: number; lostPlans: number } {
  const rng = new Rng(seed);
  let now = 0;
  let nextNode = 0;
  let nextJob = 0;
  let crashes = 0;
  let lostPlans = 0;
  let nodes: NodeState[] = Array.from({ length: rng.int(2, 6) }, () => ({ id: `n${nextNode++}`, assignment: '' }));
  const jobs = new Map<string, SimJob>();
  const view = (): ClusterView => ({ now, nodes, jobs: [...jobs.values()].map(({ work: _w, ranFor: _r, ...j }) => j) });
  const adopt = (v: ClusterView) => {
    nodes = [...v.nodes];
    for (const j of v.jobs) if (j.started) jobs.get(j.id)!.started = true;
  };

  const steps = 400;
  for (let step = 0; step < steps || [...jobs.values()].some((j) => !j.finished); step++) {
    assert.ok(step < steps * 10, `seed ${seed}: jobs never finished: ${JSON.stringify(view())}`);
    const dt = rng.int(1, 10);
    now += dt;
    const arrivals = step < steps;
    // Running jobs make progress in proportion to their nodes; one with enough work done finishes.
    for (const j of jobs.values()) {
      if (j.finished) continue;
      j.ranFor += dt * nodes.filter((n) => n.assignment === j.id).length;
      if (j.ranFor >= j.work) {
        j.finished = true;
        // Often the job's nodes clear their own assignments before the scheduler releases them.
        if (rng.chance(0.5)) nodes = nodes.map((n) => (n.assignment === j.id ? { id: n.id, assignment: '' } : n));
      }
    }
    const r = rng.next();
    if (arrivals && r < 0.25) {
      const min = rng.int(1, 3);
      const max = rng.chance(0.3) ? Infinity : rng.int(min, 6);
      jobs.set(`j${String(nextJob).padStart(3, '0')}`, {
        id: `j${String(nextJob++).padStart(3, '0')}`, createdAt: now - rng.int(0, 3), minNodes: min, maxNodes: max, desired: rng.int(0, 7),
        finished: false, started: false, work: rng.int(10, 200), ranFor: 0,
      });
    } else if (arrivals && r < 0.35 && nodes.length > 1) {
      const victim = rng.pick(nodes);
      nodes = nodes.filter((n) => n !== victim); // crash: its assignment is gone with it
      crashes++;
    } else if (r < 0.5 || nodes.length < 3) {
      nodes = [...nodes, { id: `n${nextNode++}`, assignment: '' }];
    } else if (arrivals && r < 0.6) {
      const running = [...jobs.values()].filter((j) => !j.finished);
      if (running.length > 0) rng.pick(running).desired = rng.int(0, 7);
    }
    if (rng.chance(0.1)) {
      lostPlans++; // another reconciler's commit won: this plan is dropped, the next one starts afresh
      checkPlan(view(), plan(view(), policy), policy, strict);
      continue;
    }
    adopt(settle(view(), policy, strict));
  }
  return { finished: [...jobs.values()].filter((j) => j.finished).length, crashes, lostPlans };
}

describe('scheduler planner under simulated time (randomized, fixed seeds)', () => {
  for (const backfill of [false, true]) {
    it(`FCFS${backfill ? ' with backfill' : ''}: invariants after every plan, work-conserving fixed points, every job finishes`, () => {
      let crashes = 0;
      for (const seed of testSeeds([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20])) {
        const out = simulate(seed, fcfsPolicy({ backfill }), !backfill);
        assert.ok(out.finished > 10, `seed ${seed}: only ${out.finished} jobs ran`);
        crashes += out.crashes;
      }
      assert.ok(crashes > 0, 'the seeds exercised node crashes');
    });
  }
});
