/**
 * Pegasus sub-workflows run as part of their parent (test/data/workflows/subworkflows, written for
 * these tests): a DAX 3.6 `<dax>` job naming another DAX, which itself names a Pegasus 5 YAML file,
 * and the same parent in YAML with a `pegasusWorkflow` job. Their tasks join the parent as
 * `<job id>/<task id>`, the job's parents become parents of the sub-workflow's first tasks and the
 * job's children wait for its last ones; a missing or self-including file is refused naming the file
 * and line. Montage_25 included by a YAML file, replayed, stopped mid-run and resumed, runs every task
 * once. Run for real (echo, tr, wc, cat) on two nodes with every file kept in the shared directory,
 * the result is byte for byte; an edit of the
 * innermost file alone reruns exactly its task and what is below it; nothing to do after that.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { plannedTasks } from '../../../src/frameworks/workflow/prepare-run.js';
import { alreadyComplete, planWorkflowRun, runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { finalOutputs, type Workflow } from '../../../src/frameworks/workflow/workflow.js';
import { replayBytes } from '../../../src/frameworks/workflow/replay-bytes.js';
import { sharedPath } from '../../../src/frameworks/workflow/shared-path.js';
import { stopAndResume } from './stop-resume.js';
import { embeddedFixture } from './embedded-fixture.js';

const DATA = new URL('../../data/workflows/subworkflows/', import.meta.url).pathname;
const T = { timeout: 180_000 };

/** Each task's parents by id, the way a reader checks them against the files. */
const parentsById = (wf: Workflow) => Object.fromEntries(wf.tasks.map((t) => [t.id, t.parents.map((p) => wf.tasks[p]!.id).sort()]));

describe('Pegasus sub-workflows (DAX <dax>/<dag>, YAML pegasusWorkflow)', () => {
  const fixture = embeddedFixture({ nodes: 2, workers: 1, prefix: 'wf-sub-' });

  it('a DAX <dax> job: its tasks (and a nested YAML file\'s) join the parent with the job\'s edges', async () => {
    const wf = await loadWorkflow(join(DATA, 'parent.dax'));
    assert.deepEqual(parentsById(wf), {
      greet: [],
      stamp: [],
      'inner/upper': ['greet', 'stamp'],
      'inner/count/count': ['inner/upper'],
      final: ['inner/count/count'],
    });
    const upper = wf.tasks[wf.taskIndex('inner/upper')]!;
    assert.deepEqual(upper.command, { program: 'tr', args: ['a-z', 'A-Z'], stdin: 'words.txt', stdout: 'upper.txt' });
    // The edge from stamp is explicit only (no file): a completion marker carries it, as for any task.
    assert.ok(upper.inputs.some((f) => wf.files[f]!.marker && wf.files[f]!.producer === wf.taskIndex('stamp')));
    assert.deepEqual(wf.includes, [join(DATA, 'inner.dax'), join(DATA, 'deeper.yml')]);
  });

  it('a YAML pegasusWorkflow job reads the same sub-workflow', async () => {
    const wf = await loadWorkflow(join(DATA, 'parent.yml'));
    assert.deepEqual(parentsById(wf), { greet: [], 'inner/upper': ['greet'], 'inner/count/count': ['inner/upper'], final: ['inner/count/count'] });
    assert.equal(wf.format, 'Pegasus YAML 5.0');
  });

  it('a <dag> job, a missing file and a file including itself', async () => {
    const dir = fixture.fresh();
    const adag = (jobs: string) => `<?xml version="1.0"?>\n<adag version="3.6" name="x">\n${jobs}\n</adag>\n`;
    writeFileSync(join(dir, 'dag.dax'), adag('  <dag id="d" file="sub.yml"/>'));
    cpSync(join(DATA, 'deeper.yml'), join(dir, 'sub.yml'));
    assert.deepEqual((await loadWorkflow(join(dir, 'dag.dax'))).tasks.map((t) => t.id), ['d/count']);
    writeFileSync(join(dir, 'missing.dax'), adag('  <job id="a" name="true"/>\n  <dax id="m" file="nowhere.dax"/>'));
    await assert.rejects(loadWorkflow(join(dir, 'missing.dax')), (err: Error) => {
      assert.match(err.message, new RegExp(`^${join(dir, 'missing.dax')}:4: sub-workflow nowhere.dax: cannot read ${join(dir, 'nowhere.dax')}: ENOENT`));
      return true;
    });
    writeFileSync(join(dir, 'a.dax'), adag('  <dax id="b" file="b.yml"/>'));
    writeFileSync(join(dir, 'b.yml'), 'pegasus: "5.0"\njobs:\n  - type: pegasusWorkflow\n    id: a\n    file: a.dax\n');
    await assert.rejects(loadWorkflow(join(dir, 'a.dax')), (err: Error) => {
      assert.match(err.message, /b\.yml:3: sub-workflow a\.dax includes itself: .*a\.dax -> .*b\.yml -> .*a\.dax$/);
      return true;
    });
    writeFileSync(join(dir, 'typo.yml'), 'pegasus: "5.0"\njobs:\n  - type: pegasusWorkflw\n    id: a\n    file: a.dax\n');
    await assert.rejects(loadWorkflow(join(dir, 'typo.yml')), /typo\.yml:3: task a: type must be job, pegasusWorkflow or condorWorkflow, got "pegasusWorkflw"/);
  });

  it('Montage_25 as a sub-workflow, replayed on two nodes, stopped mid-run, resumes: nothing finished runs again', T, async () => {
    const shared = fixture.fresh();
    const file = join(DATA, 'montage-inside.yml');
    const wf = await loadWorkflow(file);
    const montage = await loadWorkflow(join(DATA, '../pegasus-dax-2.1/Montage_25.xml'));
    assert.equal(wf.tasks.length, montage.tasks.length);
    assert.ok(wf.tasks.every((t) => t.id.startsWith('montage/')));
    const scale = 0.05;
    const { resumed } = await stopAndResume(fixture.cluster, wf, { file, shared, replay: scale, nodes: 2 });
    assert.equal(resumed.members.filter((m) => m.completed > 0).length, 2, 'both members ran sub-workflow tasks');
    for (const f of finalOutputs(wf)) {
      const out = wf.files[f]!;
      assert.deepEqual(new Uint8Array(readFileSync(sharedPath(shared, out.name))), replayBytes(out.key, Math.round(out.size * scale)), out.name);
    }
    assert.equal((await runWorkflow(fixture.cluster, wf, { file, shared, replay: scale, nodes: 2 })).nothingToDo, true);
  });

  it('runs for real on two nodes; an edit of the innermost file reruns its task and what is below it', T, async () => {
    const dir = fixture.fresh();
    const files = join(dir, 'files');
    cpSync(DATA, files, { recursive: true });
    const shared = join(dir, 'shared');
    const file = join(files, 'parent.dax');
    const wf = await loadWorkflow(file);
    const first = await runWorkflow(fixture.cluster, wf, { file, shared, nodes: 2, storage: 'shared' as const });
    assert.equal(first.tasks, 5);
    assert.equal(readFileSync(join(shared, 'result.txt'), 'utf8'), '20\n'); // "hello sub-workflows\n", upper-cased, counted
    assert.equal(readFileSync(join(shared, 'ready.txt'), 'utf8'), 'ready\n');
    assert.equal((await runWorkflow(fixture.cluster, wf, { file, shared, nodes: 2, storage: 'shared' as const })).nothingToDo, true);

    // Only the sub-sub-workflow's file changes (the parent's bytes are the same): counted in lines now.
    writeFileSync(join(files, 'deeper.yml'), readFileSync(join(files, 'deeper.yml'), 'utf8').replace('arguments: [-c]', 'arguments: [-l]'));
    assert.equal(await alreadyComplete({ file, shared }), undefined, 'the record of the complete run checks the sub-workflows\' files too');
    const edited = await loadWorkflow(file);
    const plan = await planWorkflowRun(edited, { file, shared, storage: 'shared' });
    assert.deepEqual(plannedTasks(plan).map((p) => p.id), ['inner/count/count', 'final']);
    const rerun = await runWorkflow(fixture.cluster, edited, { file, shared, nodes: 2, storage: 'shared' as const, prepared: plan });
    assert.equal(rerun.tasks, 2);
    assert.equal(rerun.upToDate, 3);
    assert.equal(readFileSync(join(shared, 'result.txt'), 'utf8'), '1\n');
    assert.equal((await runWorkflow(fixture.cluster, edited, { file, shared, nodes: 2, storage: 'shared' as const })).nothingToDo, true);
  });
});
