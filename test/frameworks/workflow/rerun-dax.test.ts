/**
 * Reruns on real files: the Pegasus DAX 2.1 examples (every one is named `test`) replayed one after
 * another in one shared directory are independent — each runs every one of its tasks and writes its
 * own outputs, none takes another's journal as its own, and each then has nothing to do. On
 * Montage_25 (all through the shared directory, so intermediate files are kept): deleting its final
 * image runs exactly the task that writes it; changing an input runs exactly the tasks that read it
 * and everything below them; the plan (`--dry-run`) names the same tasks and why.
 */
import assert from 'node:assert/strict';
import { readFileSync, unlinkSync, utimesSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { plannedTasks } from '../../../src/frameworks/workflow/prepare-run.js';
import { replayBytes } from '../../../src/frameworks/workflow/replay-bytes.js';
import { planWorkflowRun, runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { sharedPath } from '../../../src/frameworks/workflow/shared-path.js';
import { childrenOf, finalOutputs, type Workflow } from '../../../src/frameworks/workflow/workflow.js';
import { embeddedFixture } from './embedded-fixture.js';
import { stopAndResume } from './stop-resume.js';

const DAX = (name: string) => new URL(`../../data/workflows/pegasus-dax-2.1/${name}.xml`, import.meta.url).pathname;
const SCALE = 0.002;
const T = { timeout: 240_000 };

function assertOutputs(wf: Workflow, shared: string, scale = SCALE): void {
  for (const f of finalOutputs(wf)) {
    const file = wf.files[f]!;
    assert.deepEqual(new Uint8Array(readFileSync(sharedPath(shared, file.name))), replayBytes(file.key, Math.round(file.size * scale)), `${wf.source}: ${file.name}`);
  }
}

/** Task ids of `starts` and every task below them. */
function andBelow(wf: Workflow, starts: number[]): string[] {
  const children = childrenOf(wf);
  const seen = new Set<number>();
  const walk = (t: number) => {
    if (seen.has(t)) return;
    seen.add(t);
    for (const c of children[t]!) walk(c);
  };
  starts.forEach(walk);
  return [...seen].map((t) => wf.tasks[t]!.id).sort();
}

describe('reruns of the Pegasus DAX 2.1 examples (all named "test")', () => {
  const fixture = embeddedFixture({ nodes: 2, workers: 1, prefix: 'wf-dax-' });
  const { fresh } = fixture;

  it('four workflows of one name in one shared directory are independent; each then has nothing to do', T, async () => {
    const shared = fresh();
    const names = ['Montage_25', 'CyberShake_30', 'Inspiral_30', 'Epigenomics_24'];
    const workflows = await Promise.all(names.map((n) => loadWorkflow(DAX(n))));
    assert.deepEqual(new Set(workflows.map((w) => w.name)), new Set(['test']));
    for (const [i, wf] of workflows.entries()) {
      const result = await runWorkflow(fixture.cluster, wf, { file: DAX(names[i]!), shared, replay: SCALE, nodes: 2 });
      assert.equal(result.upToDate, 0, `${names[i]}: no task taken as done from another workflow named test`);
      assert.equal(result.tasks, wf.tasks.length, `${names[i]}: every task ran`);
      assertOutputs(wf, shared);
    }
    for (const [i, wf] of workflows.entries()) {
      const again = await runWorkflow(fixture.cluster, wf, { file: DAX(names[i]!), shared, replay: SCALE, nodes: 2 });
      assert.equal(again.nothingToDo, true, `${names[i]} again: nothing to do`);
      // Planned in full too (not only recognised from the file's bytes): every task up to date.
      const plan = await planWorkflowRun(wf, { shared, replay: SCALE });
      assert.equal(plan.plan.upToDate, wf.tasks.length, names[i]);
      assertOutputs(wf, shared);
    }
  });

  it('Montage_25: a deleted final output runs its producer alone; a touched input runs its readers and what is below them', T, async () => {
    const shared = fresh();
    const file = DAX('Montage_25');
    const wf = await loadWorkflow(file);
    const opts = { file, shared, replay: SCALE, nodes: 2, storage: 'shared' as const };
    assert.equal((await runWorkflow(fixture.cluster, wf, opts)).tasks, wf.tasks.length);

    const [final] = finalOutputs(wf);
    const image = wf.files[final!]!;
    unlinkSync(sharedPath(shared, image.name));
    const afterDelete = await planWorkflowRun(wf, opts);
    assert.deepEqual(plannedTasks(afterDelete), [{ id: wf.tasks[image.producer]!.id, reason: `output ${image.name} is missing` }]);
    const rerun = await runWorkflow(fixture.cluster, wf, { ...opts, prepared: afterDelete });
    assert.equal(rerun.tasks, 1);
    assert.equal(rerun.upToDate, wf.tasks.length - 1);
    assertOutputs(wf, shared);

    // Touch the input fewest tasks depend on: its readers and everything below them run, nothing else.
    const inputs = wf.files.map((f, i) => i).filter((f) => wf.files[f]!.producer < 0 && !wf.files[f]!.marker);
    const input = inputs.sort((a, b) => andBelow(wf, wf.files[a]!.consumers).length - andBelow(wf, wf.files[b]!.consumers).length)[0]!;
    const expected = andBelow(wf, wf.files[input]!.consumers);
    assert.ok(expected.length < wf.tasks.length, 'a part of the workflow, not all of it');
    const later = new Date(Date.now() + 10_000);
    utimesSync(sharedPath(shared, wf.files[input]!.name), later, later); // touched: compared by size and mtime, it changed
    const afterChange = await planWorkflowRun(wf, opts);
    const planned = plannedTasks(afterChange);
    assert.deepEqual(planned.map((p) => p.id).sort(), expected);
    for (const p of planned) {
      const t = wf.taskIndex(p.id);
      assert.equal(p.reason, wf.files[input]!.consumers.includes(t) ? `input ${wf.files[input]!.name} changed` : p.reason.startsWith('upstream task ') ? p.reason : `(${p.reason})`, p.id);
    }
    const changed = await runWorkflow(fixture.cluster, wf, { ...opts, prepared: afterChange });
    assert.equal(changed.tasks, expected.length);
    assert.equal((await runWorkflow(fixture.cluster, wf, opts)).nothingToDo, true);
  });

  it('Montage_25 stopped mid-run resumes: the intermediate copies of fit.txt (one per writer) are saved apart, nothing finished runs again', T, async () => {
    const shared = fresh();
    const file = DAX('Montage_25');
    const wf = await loadWorkflow(file);
    const scale = 0.05;
    const { resumed } = await stopAndResume(fixture.cluster, wf, { file, shared, replay: scale, nodes: 2 });
    assert.equal(resumed.members.reduce((n, m) => n + m.recreated, 0), 0, 'no finished task ran again: every file still needed was saved, each copy apart');
    assertOutputs(wf, shared, scale);
  });
});
