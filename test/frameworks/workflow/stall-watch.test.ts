/**
 * A run that cannot make progress fails naming what it waits for, instead of hanging: the watch's
 * rules on given figures, and a real run on an embedded cluster given an inconsistent plan (a task
 * said to be up to date, its completion marker not said to be present: the way a journal of another
 * workflow once made reruns hang), which fails naming the waiting task and the task it waits for.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createRunDir } from '../../../src/frameworks/workflow/run-directory.js';
import { WORKFLOW_KIND } from '../../../src/frameworks/workflow/workflow-kind-ref.js';
import { StallWatch, type MemberProgress } from '../../../src/frameworks/workflow/stall-watch.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { WorkflowJobConfig } from '../../../src/frameworks/workflow/workflow-kind.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { withDeadline } from '../../support/wait.js';

const member = (node: string, over: Partial<MemberProgress> = {}): MemberProgress => ({
  node, running: 0, ready: 0, waiting: node === 'a' ? 1 : 0, completed: 3, recreated: 0, retries: 0, steals: 0, stolenIn: 0, dispatched: 4, finished: node === 'a' ? 3 : 0,
  waits: node === 'a' ? ['task c waits for task b to finish (not done)'] : [], ...over,
});

describe('a run that cannot make progress', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the watch: three idle, unchanged looks of every member fail the run, naming the waits; any change or activity starts over', () => {
    const watch = new StallWatch(3);
    const idle = [member('a'), member('b')];
    assert.equal(watch.observe(idle, 2, 4), undefined);
    assert.equal(watch.observe(idle, 2, 4), undefined);
    assert.equal(watch.observe([member('a', { running: 1 }), member('b')], 2, 4), undefined, 'a task running: not stuck');
    assert.equal(watch.observe(idle, 2, 4), undefined);
    assert.equal(watch.observe(idle, 2, 4), undefined);
    assert.equal(watch.observe([member('a', { completed: 4 }), member('b')], 2, 4), undefined, 'a task finished: progress');
    assert.equal(watch.observe([member('a', { completed: 4 }), member('b')], 2, 4), undefined);
    assert.equal(watch.observe([member('a')], 2, 4), undefined, 'a member did not answer: nothing proven');
    const idle2 = [member('a', { completed: 4 }), member('b')];
    assert.equal(watch.observe(idle2, 2, 4), undefined);
    assert.equal(watch.observe(idle2, 2, 4), undefined);
    const error = watch.observe(idle2, 2, 4);
    assert.equal(error, 'the run cannot make progress: no task is running or ready on any of 2 members and nothing changed over 3 looks; 3 of 4 tasks done: task c waits for task b to finish (not done) (on a)');
  });

  it('an embedded run given an inconsistent plan fails within seconds, naming the waiting task and what it waits for', { timeout: 120_000 }, async () => {
    const shared = mkdtempSync(join(tmpdir(), 'wf-stall-'));
    dirs.push(shared);
    const app = new URL('./apps/mix.ts', import.meta.url).href;
    const log = join(shared, 'ran.log');
    const builder = new WorkflowBuilder('stall')
      .fn('a', { module: app, export: 'mix' }, { outputs: ['a.txt'], args: [log, 's', 'a.txt'] })
      .fn('b', { module: app, export: 'mix' }, { outputs: ['b.txt'], args: [log, 's', 'b.txt'] })
      .fn('c', { module: app, export: 'mix' }, { inputs: ['a.txt'], outputs: ['c.txt'], args: [log, 's', 'c.txt'], parents: ['b'] });
    const wf = builder.build();
    // b is said to be done already, but its completion marker (c waits for it) is not said to be present.
    const upToDate = new Uint8Array(wf.tasks.length);
    upToDate[wf.taskIndex('b')] = 1;
    const run = createRunDir(join(shared, '.tidepool'), { workflow: wf.name, format: wf.format, source: '<code>', shared, started: new Date().toISOString(), tasks: 3, toRun: 2, upToDate: 1, inputs: {} },
      { fingerprints: wf.tasks.map((_, t) => `${t}`.padStart(32, '0')), upToDate, saved: [] });
    const config: WorkflowJobConfig = { source: { code: builder.toSource() }, shared, run, stallLookMs: 200 };
    const cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
    try {
      const job = await cluster.submitJob({ kind: WORKFLOW_KIND, kindSpec: config, nodes: 2 });
      await assert.rejects(withDeadline(job.result(), 'the stuck run to fail', 60_000),
        /the run cannot make progress: no task is running or ready on any of 2 members .*; 2 of 3 tasks done: task c waits for task b to finish \(up to date from an earlier run\) \(on .+\)$/);
    } finally {
      await cluster.close();
    }
  });
});
