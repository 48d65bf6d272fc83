/**
 * The engine's protocols (FAP readiness, the sharded location service, dispatch, first-READY-first-run,
 * locality-preferring stealing, retries, crash recovery by re-running producers of lost files) under
 * simulated time: deterministic, with every start checked against its parents' finishes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { SimCluster } from './sim-cluster.js';

const DIR = '/work/shared/data/workflows/';

function completedOnce(sim: SimCluster): void {
  let completed = 0;
  for (const e of sim.engines.values()) completed += e.stats.completed;
  assert.equal(completed, sim.workflow.tasks.length, 'every task completed once (recreations apart)');
}

describe('workflow engine in simulated time', () => {
  for (const mode of ['decentralized', 'centralized'] as const) {
    it(`Montage_100 on 4 members, ${mode}: every task once, no start before its inputs`, async () => {
      const wf = await loadWorkflow(DIR + 'pegasus-dax-2.1/Montage_100.xml');
      const sim = new SimCluster(wf, { nodes: 4, mode, slots: 2, scale: 0.01, seed: 7 });
      sim.start();
      sim.runUntil();
      assert.deepEqual(sim.outcome, { ok: true });
      assert.deepEqual(sim.checkOrder(), []);
      completedOnce(sim);
      const total = [...sim.engines.values()].reduce((n, e) => n + e.shard.queries, 0);
      assert.ok(total > 0, 'inputs were located through the location service');
    });
  }

  it('makespan with unlimited slots equals the critical path (plus latencies) on a real WfFormat run', async () => {
    const wf = await loadWorkflow(DIR + 'wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-005d-001.json');
    const sim = new SimCluster(wf, { nodes: 3, slots: 64, scale: 1, latency: 0.0001, stealing: false, seed: 3 });
    sim.start();
    const makespan = sim.runUntil();
    assert.deepEqual(sim.outcome, { ok: true });
    assert.ok(makespan >= wf.counts.criticalPath - 1e-9, `${makespan} ≥ critical path ${wf.counts.criticalPath}`);
    assert.ok(makespan < wf.counts.criticalPath + 0.05, `${makespan} close to critical path ${wf.counts.criticalPath}`);
  });

  it('a failing task is retried and the workflow completes; one failing for good fails the workflow naming it', async () => {
    const wf = await loadWorkflow(DIR + 'pegasus-dax-2.1/Montage_25.xml');
    const retried = new SimCluster(wf, { nodes: 2, scale: 0.01, failures: new Map([[3, 2]]), maxAttempts: 3 });
    retried.start();
    retried.runUntil();
    assert.deepEqual(retried.outcome, { ok: true });
    assert.equal([...retried.engines.values()].reduce((n, e) => n + e.stats.retries, 0), 2);
    const failed = new SimCluster(wf, { nodes: 2, scale: 0.01, failures: new Map([[3, 9]]), maxAttempts: 3 });
    failed.start();
    failed.runUntil();
    assert.equal(failed.outcome?.ok, false);
    assert.match((failed.outcome as { error: string }).error, new RegExp(`task ${wf.tasks[3]!.id} failed 3 times`));
  });

  it('a member killed mid-run: its tasks are dispatched again and lost files recreated by re-running their producers', async () => {
    const wf = await loadWorkflow(DIR + 'pegasus-dax-2.1/Montage_100.xml');
    const sim = new SimCluster(wf, { nodes: 4, slots: 2, scale: 0.01, seed: 11 });
    sim.start();
    sim.runUntil(Infinity, (s) => s.finishes.size >= 50);
    const victim = 'n2';
    const hadFiles = sim.stores.get(victim)!.size;
    assert.ok(hadFiles > 0, 'the victim holds intermediate files');
    sim.kill(victim);
    sim.runUntil();
    assert.deepEqual(sim.outcome, { ok: true });
    assert.deepEqual(sim.checkOrder(), []);
    const finals = wf.files.filter((f) => f.producer >= 0 && f.consumers.length === 0).length;
    assert.equal([...sim.shared].length, finals, 'every final output reached the shared directory');
    const recreated = [...sim.engines.values()].reduce((n, e) => n + e.stats.recreated, 0);
    assert.ok(recreated > 0, 'producers of lost files ran again');
    // Counted once: completions journaled as first completions equal the task count across survivors and the victim.
    const firsts = new Set(sim.journalLines.map(([t]) => t));
    assert.equal(firsts.size, wf.tasks.length);
  });

  it('members joining mid-run take work by stealing', async () => {
    const wf = await loadWorkflow(DIR + 'pegasus-dax-2.1/CyberShake_100.xml');
    const sim = new SimCluster(wf, { nodes: 1, slots: 1, scale: 0.01, seed: 5 });
    sim.start();
    sim.runUntil(Infinity, (s) => s.finishes.size >= 10);
    sim.join('n1');
    sim.join('n2');
    sim.runUntil();
    assert.deepEqual(sim.outcome, { ok: true });
    assert.deepEqual(sim.checkOrder(), []);
    completedOnce(sim);
    assert.ok(sim.engines.get('n1')!.stats.completed + sim.engines.get('n2')!.stats.completed > 0, 'the new members ran tasks');
  });
});
