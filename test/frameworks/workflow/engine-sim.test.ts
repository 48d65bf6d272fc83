/**
 * The engine's protocols (FAP readiness, the sharded location service, dispatch, first-READY-first-run,
 * locality-preferring stealing, retries, crash recovery by re-running producers of lost files) under
 * simulated time: deterministic, with every start checked against its parents' finishes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { AddedTask } from '../../../src/frameworks/workflow/workflow.js';
import { WorkflowEngine } from '../../../src/frameworks/workflow/workflow-engine.js';
import { SimCluster } from './sim-cluster.js';

const DIR = fileURLToPath(new URL('../../data/workflows/', import.meta.url));

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

  it('Fig. 14 samples: query and update round trips to remote shards, and waits for files not yet produced', async () => {
    const wf = await loadWorkflow(DIR + 'pegasus-dax-2.1/Montage_100.xml');
    const latency = 0.002;
    // Every member a shard (AME units of one node), so that most queries and updates go to a remote one.
    const sim = new SimCluster(wf, { nodes: 3, slots: 2, scale: 0.01, seed: 13, latency, clock: true, units: { nodes: 1, shards: 1, dispatchers: 1 } });
    sim.start();
    sim.runUntil();
    assert.deepEqual(sim.outcome, { ok: true });
    const all = (k: 'queryMs' | 'updateMs' | 'waitMs') => [...sim.engines.values()].flatMap((e) => e.stats[k]);
    // A one-way message takes 0.5–1.5 × latency here, and a later one on a channel never overtakes an earlier one.
    // Queries leave mostly at once, when tasks are assigned (a batch per shard); updates all along the run.
    assert.ok(all('queryMs').length >= 3, `queryMs: ${all('queryMs').length} samples`);
    assert.ok(all('updateMs').length > 10, `updateMs: ${all('updateMs').length} samples`);
    for (const k of ['queryMs', 'updateMs'] as const) {
      for (const ms of all(k)) assert.ok(ms >= latency * 1000 - 1e-9, `${k} round trip ${ms} ms ≥ the smallest possible ${latency * 1000} ms`);
    }
    assert.ok(all('waitMs').length > 0, 'some inputs were waited for');
    const queries = [...sim.engines.values()].reduce((n, e) => n + e.stats.queries, 0);
    assert.ok(all('queryMs').length < queries, 'probes are sampled, not one per query');
  });

  it('short tasks: beyond its slots a member takes tasks while their known work is under the budget (at most max)', () => {
    const bag = (runtime: number) => {
      const b = new WorkflowBuilder(`bag-${runtime}`);
      for (let i = 0; i < 200; i++) b.task({ id: `t${i}`, runtime });
      return b.build();
    };
    const mostTaken = (runtime: number) => {
      const wf = bag(runtime);
      const sim = new SimCluster(wf, { nodes: 2, slots: 2, scale: 1, seed: 3, stealing: false, short: { seconds: (t) => wf.tasks[t]!.runtime, budget: 0.005, max: 16 } });
      let most = 0;
      sim.start();
      sim.runUntil(Infinity, (s) => {
        for (const e of s.engines.values()) most = Math.max(most, e.worker.running.size);
        return false;
      });
      assert.deepEqual(sim.outcome, { ok: true });
      completedOnce(sim);
      return most;
    };
    assert.equal(mostTaken(0), 16, 'no-op tasks: up to max at once');
    assert.equal(mostTaken(0.0015), 4, '1.5 ms tasks: the 2 slots (3 ms), one more (4.5 ms < 5 ms), and the one that crosses the budget');
    assert.equal(mostTaken(0.01), 2, '10 ms tasks: the slots only');
  });

  /**
   * pre-0..7, then gen (reads their files) which adds 60 tasks d-I (each reads a pre file and gen's g.txt) and
   * gather (reads every d file); gather adds final (reads gather's file). 71 tasks in all once grown.
   */
  function growing(): { wf: ReturnType<WorkflowBuilder['build']>; additions: (t: number) => AddedTask[] | undefined } {
    const b = new WorkflowBuilder('grow');
    for (let i = 0; i < 8; i++) b.task({ id: `pre-${i}`, runtime: 1, outputs: [`p-${i}.txt`] });
    b.task({ id: 'gen', runtime: 1, inputs: Array.from({ length: 8 }, (_, i) => `p-${i}.txt`), outputs: ['g.txt'] });
    const wf = b.build();
    const additions = (t: number): AddedTask[] | undefined => {
      const id = wf.tasks[t]!.id;
      if (id === 'gen') {
        return [
          ...Array.from({ length: 60 }, (_, i): AddedTask => ({ id: `d-${i}`, command: ['true'], runtime: 1 + (i % 3), inputs: [`p-${i % 8}.txt`, 'g.txt'], outputs: [`d-${i}.txt`] })),
          { id: 'gather', command: ['true'], runtime: 1, inputs: Array.from({ length: 60 }, (_, i) => `d-${i}.txt`), outputs: ['all.txt'] },
        ];
      }
      return id === 'gather' ? [{ id: 'final', command: ['true'], runtime: 1, inputs: ['all.txt'], outputs: ['final.txt'] }] : undefined;
    };
    return { wf, additions };
  }

  for (const mode of ['decentralized', 'centralized'] as const) {
    it(`tasks added at run time (${mode}): each runs once, after its inputs, stolen and dispatched like the others`, () => {
      const { wf, additions } = growing();
      const sim = new SimCluster(wf, { nodes: 4, slots: 2, scale: 0.01, seed: 3, mode, additions });
      sim.start();
      sim.runUntil();
      assert.deepEqual(sim.outcome, { ok: true });
      assert.equal(wf.tasks.length, 71, 'gen added 61 tasks and gather one');
      assert.deepEqual(sim.checkOrder(), []);
      completedOnce(sim);
      const ranOn = new Set(sim.starts.filter((s) => wf.tasks[s.task]!.id.startsWith('d-')).map((s) => s.node));
      assert.equal(ranOn.size, 4, 'the added tasks ran on every member');
    });
  }

  for (const when of ['as gen finishes', 'midway through the added tasks'] as const) {
    it(`a member killed ${when}: every added task completes once, lost files recreated`, () => {
      const { wf, additions } = growing();
      const sim = new SimCluster(wf, { nodes: 4, slots: 2, scale: 0.01, seed: 7, additions });
      sim.start();
      const gen = wf.taskIndex('gen');
      sim.runUntil(Infinity, (s) => (when === 'as gen finishes' ? s.finishes.has(gen) : [...s.finishes.keys()].filter((t) => wf.tasks[t]!.id.startsWith('d-')).length >= 20));
      // The victim is the member that ran gen: g.txt, which every added task reads, is lost with it.
      const victim = sim.starts.find((s) => s.task === gen)!.node;
      sim.kill(victim);
      sim.runUntil();
      assert.deepEqual(sim.outcome, { ok: true });
      assert.equal(wf.tasks.length, 71);
      assert.deepEqual(sim.checkOrder(), []);
      const firsts = new Map<number, number>();
      for (const [t] of sim.journalLines) firsts.set(t, (firsts.get(t) ?? 0) + 1);
      assert.equal(firsts.size, 71, 'every task, added ones included, completed');
      completedOnce(sim);
      assert.ok([...sim.engines.values()].reduce((n, e) => n + e.stats.recreated, 0) > 0, 'gen ran again to recreate g.txt');
    });
  }

  it('two views announced in one turn (a member left right after the first): the second is adopted, not ignored as the same epoch', () => {
    const wf = new WorkflowBuilder('w').task({ id: 'a', outputs: ['a.txt'] }).build();
    const deferred: (() => void)[] = [];
    const sent: string[] = [];
    const engine = new WorkflowEngine(wf, 'n0', {
      send: (to, body) => void sent.push(`${to} ${body.type}`), run: () => undefined, readJournal: () => ({ done: new Map(), saved: new Set() }),
      journal: () => undefined, finish: () => undefined, random: () => 0.5, defer: (flush) => void deferred.push(flush),
    });
    engine.lead(['n0', 'n1', 'n2']);
    engine.lead(['n0', 'n1']); // same millisecond, before the first view was flushed to this member itself
    while (deferred.length > 0) deferred.shift()!();
    assert.deepEqual(engine.currentView?.members, ['n0', 'n1'], 'the later view, without the member that left');
    assert.ok(!sent.includes('n2 wf-held?') || sent.lastIndexOf('n1 wf-held?') > sent.lastIndexOf('n2 wf-held?'), 'the reconcile asks the members of the later view');
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
