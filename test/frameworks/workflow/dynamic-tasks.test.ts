/**
 * Tasks added while a workflow runs, on embedded clusters (worker threads, layer messages, the run's
 * expansion log in the shared directory): a function task adds 30 tasks and a gathering task, which
 * adds one more — outputs right, each task run once, the added tasks spread over the members, counted
 * by status and statistics; reruns (nothing to do; a deleted output of an added task runs that task
 * alone, its adder's additions applied again from the journal; a changed input runs the adder and
 * what it adds now); a run stopped while added tasks wait resumes without running a finished task
 * again; a member killed mid-run (its intermediate files lost) — every task completes once; additions
 * refused with the reason; a command task adding tasks through `$TIDEPOOL_ADD_TASKS`.
 */
import assert from 'node:assert/strict';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Journal } from '../../../src/frameworks/workflow/journal.js';
import { plannedTasks } from '../../../src/frameworks/workflow/prepare-run.js';
import { readProvenance } from '../../../src/frameworks/workflow/provenance.js';
import { planWorkflowRun, runWorkflow, submitWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { runStatistics, runStatus } from '../../../src/frameworks/workflow/run-statistics.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { WorkflowResult } from '../../../src/frameworks/workflow/workflow-kind.js';
import { requestJob } from '../../../src/runtime/client/job-requests.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { embeddedFixture } from './embedded-fixture.js';

const T = { timeout: 240_000 };
const APP = new URL('./apps/grow.ts', import.meta.url).href;

/** How many times each task id appears in a log the tasks append to. */
function ranCounts(log: string): Map<string, number> {
  const counts = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return counts;
  }
  for (const id of text.split('\n').filter((l) => l !== '')) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

const squaresOf = (n: number) => Array.from({ length: n }, (_, i) => `square-${i}`);
const listOf = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('');
const sumOfSquares = (n: number) => (n * (n + 1) * (2 * n + 1)) / 6;

describe('tasks added at run time', () => {
  const fixture = embeddedFixture({ nodes: 2, workers: 1, prefix: 'wf-grow-' });
  const { fresh } = fixture;
  /** `split` reading list.txt of `n` numbers in a fresh shared directory; its log beside it. */
  const splitting = (n: number, gate?: string) => {
    const shared = fresh();
    writeFileSync(join(shared, 'list.txt'), listOf(n));
    const log = join(fresh(), 'ran.log');
    const builder = new WorkflowBuilder('grow').fn('split', { module: APP, export: 'split' }, { args: [log, ...(gate !== undefined ? [gate] : [])], inputs: ['list.txt'], outputs: ['count.txt'] });
    return { shared, log, builder, opts: { builder, shared, nodes: 2 } };
  };

  it('a task adds 30 tasks and a gathering one, which adds another: each runs once, on both members; status and statistics count them', T, async () => {
    const { shared, log, builder, opts } = splitting(30);
    const result = await runWorkflow(fixture.cluster, builder.build(), opts);
    assert.equal(result.tasks, 33, 'split, 30 squares, sum, report');
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), `sum ${sumOfSquares(30)} of 30 squares\n`);
    assert.deepEqual(new Map([...ranCounts(log)].sort()), new Map(['split', ...squaresOf(30), 'sum', 'report'].map((id) => [id, 1] as [string, number]).sort()));
    const journal = Journal.scan(result.run!);
    assert.equal(journal.completions.size, 33);
    assert.ok([...journal.completions.values()].every((n) => n === 1), 'each completed once');
    const squareNodes = new Set(readProvenance(result.run!).records.filter((r) => r.transformation === 'square').map((r) => r.node));
    assert.equal(squareNodes.size, 2, 'the added tasks ran on both members');
    const status = runStatus(result.run!);
    assert.deepEqual({ state: status.state, added: status.added, done: status.done, left: status.left }, { state: 'done', added: 32, done: 33, left: 0 });
    const stats = runStatistics(result.run!);
    assert.deepEqual({ tasks: stats.tasks, succeeded: stats.succeeded, incomplete: stats.incomplete }, { tasks: 33, succeeded: 33, incomplete: 0 });
    assert.equal(stats.transformations.find((t) => t.transformation === 'square')?.succeeded, 30);
  });

  it('reruns: nothing to do; a deleted output of an added task runs it alone; a changed input runs the adder and what it adds now', T, async () => {
    const { shared, log, builder, opts } = splitting(6);
    const wf = builder.build();
    await runWorkflow(fixture.cluster, wf, opts);
    assert.equal((await runWorkflow(fixture.cluster, wf, opts)).nothingToDo, true);
    const ranSince = (() => {
      let seen = readFileSync(log, 'utf8').length;
      return () => {
        const text = readFileSync(log, 'utf8');
        const ids = text.slice(seen).split('\n').filter((l) => l !== '').sort();
        seen = text.length;
        return ids;
      };
    })();
    unlinkSync(join(shared, 'report.txt'));
    const plan = await planWorkflowRun(wf, opts);
    assert.deepEqual(plannedTasks(plan), [{ id: 'report', reason: 'output report.txt is missing' }], 'the additions of split and sum are applied again before the plan');
    const again = await runWorkflow(fixture.cluster, wf, { ...opts, prepared: plan });
    assert.equal(again.tasks, 1);
    assert.equal(again.upToDate, 8, 'split, 6 squares and sum');
    assert.deepEqual(ranSince(), ['report']);
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), `sum ${sumOfSquares(6)} of 6 squares\n`);
    assert.equal((await runWorkflow(fixture.cluster, wf, opts)).nothingToDo, true);
    writeFileSync(join(shared, 'list.txt'), listOf(4));
    const changed = await runWorkflow(fixture.cluster, wf, opts);
    assert.equal(changed.tasks, 7, 'split, 4 squares, sum, report');
    assert.deepEqual(ranSince(), ['report', 'split', ...squaresOf(4), 'sum'].sort());
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), `sum ${sumOfSquares(4)} of 4 squares\n`);
    assert.equal((await runWorkflow(fixture.cluster, wf, opts)).nothingToDo, true);
  });

  it('a run stopped while added tasks wait resumes: what finished (added tasks included) is up to date, the rest runs, nothing twice', T, async () => {
    const gate = join(fresh(), 'open');
    const { shared, log, builder, opts } = splitting(40, gate);
    const wf = builder.build();
    const first = await submitWorkflow(fixture.cluster, wf, opts);
    await waitFor(() => readProvenance(first.dir).running.some((r) => r.task.startsWith('square-')), 'an added task to start', 60_000);
    const stopping = requestJob(fixture.cluster.coordination, first.id, 'stop', null, { timeoutMs: 120_000 });
    await waitFor(() => readProvenance(first.dir).paused.length === 2, 'both members to stop starting tasks', 60_000);
    writeFileSync(gate, ''); // the squares already started end; no other starts
    assert.deepEqual(await stopping, { stopped: true });
    assert.equal((await withDeadline(first.result<WorkflowResult>(), 'the stopped run', 60_000)).stopped, true);
    const finished = Journal.scan(first.dir).completions.size;
    assert.ok(finished >= 2 && finished < 43, `stopped with split and some squares finished (${finished})`);
    assert.equal(runStatus(first.dir).state, 'stopped');
    const resumed = await runWorkflow(fixture.cluster, wf, opts);
    assert.equal(resumed.upToDate, finished, 'what the stopped run finished is up to date, the squares it added too');
    assert.equal(resumed.tasks, 43 - finished, 'the rest ran');
    assert.equal(resumed.members.reduce((n, m) => n + m.recreated, 0), 0, 'the finished squares\' files were saved: none ran again');
    assert.deepEqual([...ranCounts(log).values()].filter((n) => n !== 1), [], 'no task ran twice');
    assert.equal(ranCounts(log).size, 43);
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), `sum ${sumOfSquares(40)} of 40 squares\n`);
  });

  it('additions that cannot be made fail the workflow, naming the adding task, the added task and why', T, async () => {
    const cases: [unknown[], RegExp][] = [
      [[{ id: 'told', command: ['true'] }], /task told added task told: a task of that id is already in the workflow/],
      [[{ id: 'x', command: ['true'], inputs: ['nowhere.txt'] }], /task told added task x: input nowhere\.txt is neither a file of the workflow nor an output of a task added with it/],
      [[{ id: 'a', command: ['true'], inputs: ['b.txt'], outputs: ['a.txt'] }, { id: 'b', command: ['true'], inputs: ['a.txt'], outputs: ['b.txt'] }], /task told added tasks in a dependency cycle: (a -> b -> a|b -> a -> b)/],
      [[{ id: 'y', fn: { export: 'nothing' }, command: ['true'] }], /task told added task y: needs exactly one of fn and command/],
    ];
    for (const [added, expected] of cases) {
      const shared = fresh();
      const builder = new WorkflowBuilder('refused').fn('told', { module: APP, export: 'addAsTold' }, { args: ['', JSON.stringify(added)], outputs: ['told.txt'] });
      await assert.rejects(runWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 2 }), expected);
    }
  });

  it('a command task adds tasks by writing them to $TIDEPOOL_ADD_TASKS; they read its output', T, async () => {
    const shared = fresh();
    const added = JSON.stringify([{ id: 'twice', command: ['sh', '-c', 'cat seed.txt seed.txt > twice.txt'], inputs: ['seed.txt'], outputs: ['twice.txt'] }]);
    const builder = new WorkflowBuilder('adds-by-file').command('seed', ['sh', '-c', `echo grain > seed.txt; printf '%s' '${added}' > "$TIDEPOOL_ADD_TASKS"`], { outputs: ['seed.txt'] });
    const result = await runWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 2 });
    assert.equal(result.tasks, 2);
    assert.equal(readFileSync(join(shared, 'twice.txt'), 'utf8'), 'grain\ngrain\n');
  });
});

describe('tasks added at run time, a member lost', () => {
  const fixture = embeddedFixture({ nodes: 3, workers: 1, prefix: 'wf-grow-' });

  it('the member running an added task crashes with files of others: it runs elsewhere, they run again to recreate them, every task completes once', T, async () => {
    const [shared, scratch] = [fixture.fresh(), fixture.fresh()];
    writeFileSync(join(shared, 'list.txt'), listOf(40));
    const gate = join(scratch, 'open');
    const log = join(scratch, 'ran.log');
    const builder = new WorkflowBuilder('grow').fn('split', { module: APP, export: 'split' }, { args: [log, '', gate], inputs: ['list.txt'], outputs: ['count.txt'] });
    const job = await submitWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 3 });
    // Every square finishes (its file stays on the member that ran it); sum, which reads them all, waits at its gate
    // while the member running it crashes: sum runs elsewhere, and the squares whose files went with the member run again.
    await waitFor(() => readProvenance(job.dir).running.some((r) => r.task === 'sum'), 'sum to start', 60_000);
    const victim = readProvenance(job.dir).running.find((r) => r.task === 'sum')!.node;
    assert.ok(readProvenance(job.dir).records.some((r) => r.task.startsWith('square-') && r.node === victim), 'the member running sum holds squares\' files');
    await fixture.cluster.crashNode(victim);
    writeFileSync(gate, '');
    await withDeadline(job.result<WorkflowResult>(), 'the run after the crash', 180_000);
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), `sum ${sumOfSquares(40)} of 40 squares\n`);
    const journal = Journal.scan(job.dir);
    assert.equal(journal.completions.size, 43, 'every task, the added ones included, completed');
    assert.deepEqual([...journal.completions].filter(([, n]) => n !== 1), [], 'each completed once (recreations apart)');
    assert.ok(journal.recreations > 0, 'squares whose files were lost ran again to recreate them');
    assert.deepEqual([...ranCounts(log).keys()].sort(), ['split', ...squaresOf(40), 'sum', 'report'].sort());
  });
});
