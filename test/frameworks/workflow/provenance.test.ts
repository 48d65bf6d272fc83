/**
 * What ran, as an operator reads it afterwards: one provenance record per task attempt (host, node,
 * start, end, exit code, bytes read by source and written) in `<run>/provenance/*.jsonl`;
 * `tidepool workflow statistics RUN` (per transformation counts and runtimes, wall and cumulative
 * time, as pegasus-statistics) and `tidepool workflow status RUN` for a run still going (its running
 * task named) and finished. Built CLI: `npm run build` first.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readProvenance, type AttemptRecord } from '../../../src/frameworks/workflow/provenance.js';
import { runWorkflow, submitWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { runStatistics, runStatus, type RunStatistics, type RunStatus } from '../../../src/frameworks/workflow/run-statistics.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { WorkflowResult } from '../../../src/frameworks/workflow/workflow-kind.js';
import { tidepool } from '../../support/cli.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { embeddedFixture } from './embedded-fixture.js';

const T = { timeout: 180_000 };

describe('provenance, statistics and status of a run', () => {
  const fixture = embeddedFixture({ nodes: 2, workers: 1, prefix: 'wf-prov-' });
  const { fresh } = fixture;

  it('a record per attempt: host, node, times, exit codes, bytes by source; statistics and status agree with them', T, async () => {
    const shared = fresh();
    writeFileSync(join(shared, 'in.txt'), '0123456789'); // 10 bytes
    const flag = join(fresh(), 'failed-once');
    const builder = new WorkflowBuilder('prov')
      .command('make', ['sh', '-c', 'cat in.txt in.txt > mid.txt'], { inputs: ['in.txt'], outputs: ['mid.txt'] })
      .command('flaky', ['sh', '-c', `if [ ! -e ${flag} ]; then touch ${flag}; echo no >&2; exit 3; fi; cat mid.txt > out.txt; printf x >> out.txt`], { inputs: ['mid.txt'], outputs: ['out.txt'] });
    const result = await runWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 2 });
    assert.equal(result.tasks, 2);
    const { records } = readProvenance(result.run!);
    const by = (task: string) => records.filter((r) => r.task === task).sort((a, b) => a.attempt - b.attempt);
    const [make] = by('make');
    const [failed, ok] = by('flaky');
    assert.equal(records.length, 3, 'one record per attempt');
    const nodes = new Set(result.members.map((m) => m.node));
    for (const r of records as AttemptRecord[]) {
      assert.equal(r.host, hostname());
      assert.ok(nodes.has(r.node), `${r.node} is a member`);
      assert.ok(Date.parse(r.start) <= Date.parse(r.end));
      assert.ok(Math.abs(r.duration - (Date.parse(r.end) - Date.parse(r.start)) / 1000) < 0.002);
    }
    assert.deepEqual({ status: make!.status, exitCode: make!.exitCode, bytesIn: make!.bytesIn, bytesOut: make!.bytesOut }, { status: 'ok', exitCode: 0, bytesIn: { shared: 10, peer: 0, local: 0 }, bytesOut: 20 });
    assert.deepEqual({ attempt: failed!.attempt, status: failed!.status, exitCode: failed!.exitCode }, { attempt: 1, status: 'failed', exitCode: 3 });
    assert.match(failed!.error!, /^sh exited with code 3; the end of its stderr \(logs\/flaky\.err\): no$/);
    assert.deepEqual({ attempt: ok!.attempt, status: ok!.status, exitCode: ok!.exitCode, bytesOut: ok!.bytesOut }, { attempt: 2, status: 'ok', exitCode: 0, bytesOut: 21 });
    assert.equal(ok!.bytesIn.shared, 0);
    assert.equal(ok!.bytesIn.peer + ok!.bytesIn.local, 20, 'the intermediate file, fetched from its holder or held here');
    assert.equal(ok!.bytesIn.peer > 0, ok!.node !== make!.node, 'fetched peer to peer exactly when it ran on the other node');

    const stats = runStatistics(result.run!);
    assert.deepEqual({ succeeded: stats.succeeded, failed: stats.failed, attempts: stats.attempts, retries: stats.retries, tasks: stats.tasks }, { succeeded: 2, failed: 0, attempts: 3, retries: 1, tasks: 2 });
    const sh = stats.transformations.find((t) => t.transformation === 'flaky')!;
    assert.deepEqual({ attempts: sh.attempts, succeeded: sh.succeeded, failed: sh.failed, total: sh.total }, { attempts: 2, succeeded: 1, failed: 1, total: ok!.duration });
    assert.ok(Math.abs(stats.cumulativeTime - (make!.duration + failed!.duration + ok!.duration)) < 1e-9, 'cumulative time: the sum of every attempt');
    assert.equal(stats.wallTime, (Math.max(...records.map((r) => Date.parse(r.end))) - Math.min(...records.map((r) => Date.parse(r.start)))) / 1000);
    assert.deepEqual(stats.bytes, { shared: 10, peer: ok!.bytesIn.peer, local: ok!.bytesIn.local, out: 41 });

    const cli = await tidepool(['workflow', 'statistics', shared, '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout) as RunStatistics, stats, 'RUN given as the shared directory: its latest run');
    const text = await tidepool(['workflow', 'statistics', result.run!]);
    assert.match(text.stdout, /^ {2}Tasks +2 +0 +0 +0 +2 +1 +3$/m);
    assert.match(text.stdout, /^ {2}flaky +2 +1 +1 /m);
    assert.match(text.stdout, /^Bytes read +: 10 B shared, \d+ B peer to peer, \d+ B held locally; written 41 B$/m);
    const status = await tidepool(['workflow', 'status', result.run!, '--json']);
    assert.deepEqual((({ state, done, left, failedAttempts }) => ({ state, done, left, failed: failedAttempts.length }))(JSON.parse(status.stdout) as RunStatus), { state: 'done', done: 2, left: 0, failed: 1 });
  });

  it('status of a run still going names the task running and where; then done', T, async () => {
    const shared = fresh();
    const gate = join(fresh(), 'go');
    const builder = new WorkflowBuilder('going')
      .command('first', ['sh', '-c', 'echo 1 > one.txt'], { outputs: ['one.txt'] })
      .command('waiting', ['sh', '-c', `while [ ! -e ${gate} ]; do sleep 0.05; done; cat one.txt > two.txt`], { inputs: ['one.txt'], outputs: ['two.txt'] });
    const job = await submitWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 2 });
    await waitFor(() => runStatus(job.dir).running.some((r) => r.task === 'waiting'), 'the waiting task to be seen running', 60_000);
    // The first task's completion is journalled (synchronously) before the waiting task can start.
    const going = runStatus(job.dir);
    assert.equal(going.state, 'running');
    assert.deepEqual({ done: going.done, left: going.left }, { done: 1, left: 1 });
    const cli = await tidepool(['workflow', 'status', job.dir]);
    assert.match(cli.stdout, /^going \(code, 2 tasks\): running$/m);
    assert.match(cli.stdout, /^ {2}running: waiting \(attempt 1\) on n-\S+ for \d+\.\d s$/m);
    writeFileSync(gate, '');
    const result = await withDeadline(job.result<WorkflowResult>(), 'the run', 60_000);
    assert.equal(result.tasks, 2);
    await waitFor(() => runStatus(job.dir).state === 'done', 'the outcome to be recorded', 30_000);
    assert.deepEqual((({ state, done, left, running }) => ({ state, done, left, running }))(runStatus(job.dir)), { state: 'done', done: 2, left: 0, running: [] });
    assert.equal(readFileSync(join(shared, 'two.txt'), 'utf8'), '1\n');
    assert.deepEqual(readdirSync(join(job.dir, 'provenance')).filter((n) => n.endsWith('.jsonl')).length > 0, true);
  });
});
