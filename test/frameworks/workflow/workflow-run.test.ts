/**
 * Workflows on an embedded cluster (worker threads, layer messages, the data plane): a Montage replay
 * where no task starts before its parents ended and every final output in the shared directory is
 * exactly the replayed content; the same run isolated and all-through-shared (bytes to shared storage
 * compared); a command workflow of real programs (sh, sort, wc, cat) and a function task; a file of
 * several transfer chunks between members.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { replayBytes } from '../../../src/frameworks/workflow/replay-bytes.js';
import { runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { sharedPath } from '../../../src/frameworks/workflow/task-execution.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { finalOutputs } from '../../../src/frameworks/workflow/workflow.js';
import { BIG_BYTES, bigContent } from './apps/big-file.js';
import { checkOrder } from './check-order.js';
import { embeddedFixture } from './embedded-fixture.js';

const DIR = fileURLToPath(new URL('../../data/workflows/', import.meta.url));
const T = { timeout: 120_000 };

describe('workflows on an embedded cluster', () => {
  const fixture = embeddedFixture({ nodes: 3, workers: 1, prefix: 'wf-' });
  const { fresh } = fixture;

  it('replays Montage_25: dependencies respected, final outputs bit-identical to the replayed content', T, async () => {
    const file = DIR + 'pegasus-dax-2.1/Montage_25.xml';
    const wf = await loadWorkflow(file);
    const shared = fresh();
    const result = await runWorkflow(fixture.cluster, wf, { file, shared, replay: 0.002, nodes: 3, trace: true });
    assert.equal(result.tasks, wf.tasks.length, 'each task completed once');
    checkOrder(wf, result);
    for (const f of finalOutputs(wf)) {
      const file = wf.files[f]!;
      assert.deepEqual(new Uint8Array(readFileSync(sharedPath(shared, file.name))), replayBytes(file.key, Math.round(file.size * 0.002)), file.name);
    }
    const peer = result.members.reduce((n, m) => n + m.bytesPeer, 0);
    assert.ok(peer > 0, 'intermediate files went peer to peer');
  });

  it('collocated sends less to shared storage than all-through-shared; isolated completes too', T, async () => {
    const file = DIR + 'wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-005d-001.json';
    const wf = await loadWorkflow(file);
    const toShared = async (storage: 'collocated' | 'shared' | 'isolated') => {
      const r = await runWorkflow(fixture.cluster, wf, { file, shared: fresh(), replay: 0.001, nodes: 3, storage });
      assert.equal(r.tasks, wf.tasks.length);
      return r.members.reduce((n, m) => n + m.bytesToShared, 0);
    };
    const collocated = await toShared('collocated');
    const shared = await toShared('shared');
    await toShared('isolated');
    const finals = finalOutputs(wf).reduce((n, f) => n + Math.round(wf.files[f]!.size * 0.001), 0);
    assert.equal(collocated, finals, 'collocated: only final outputs reach shared storage');
    assert.ok(shared > collocated, `all-through-shared writes intermediates too (${shared} > ${collocated})`);
  });

  it('a command workflow of real programs and a function task produces the right outputs', T, async () => {
    const shared = fresh();
    const words = 'pear\napple\nfig\napple\nkiwi\n';
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(shared, 'words.txt'), words);
    const builder = new WorkflowBuilder('words')
      .command('sort', ['sort', 'words.txt', '-o', 'sorted.txt'], { inputs: ['words.txt'], outputs: ['sorted.txt'] })
      .command('uniq', ['sh', '-c', 'uniq sorted.txt > unique.txt'], { inputs: ['sorted.txt'], outputs: ['unique.txt'] })
      .command('count', ['sh', '-c', 'wc -l < unique.txt | tr -d " " > count.txt'], { inputs: ['unique.txt'], outputs: ['count.txt'] })
      .command('report', ['sh', '-c', 'cat count.txt unique.txt > report.txt'], { inputs: ['count.txt', 'unique.txt'], outputs: ['report.txt'] })
      .fn('shout', { module: new URL('./apps/shout.ts', import.meta.url).href, export: 'shout' }, { inputs: ['unique.txt'], outputs: ['shout.txt'] });
    const wf = builder.build();
    const result = await runWorkflow(fixture.cluster, wf, { builder, shared, nodes: 3 });
    assert.equal(result.tasks, 5);
    assert.equal(readFileSync(join(shared, 'report.txt'), 'utf8'), '4\napple\nfig\nkiwi\npear\n');
    assert.equal(readFileSync(join(shared, 'shout.txt'), 'utf8'), 'APPLE\nFIG\nKIWI\nPEAR\n');
  });

  it('a 9 MB intermediate file goes from the member that wrote it to the one that reads it, in chunks, bit for bit', T, async () => {
    const shared = fresh();
    const app = new URL('./apps/big-file.ts', import.meta.url).href;
    // Task numbers 0 and 1 are dispatched to different members (round robin); without stealing they stay there.
    const builder = new WorkflowBuilder('big')
      .fn('make', { module: app, export: 'makeBig' }, { outputs: ['big.bin'] })
      .fn('digest', { module: app, export: 'digestBig' }, { inputs: ['big.bin'], outputs: ['digest.txt'] });
    const result = await runWorkflow(fixture.cluster, builder.build(), { builder, shared, nodes: 3, stealing: false });
    assert.equal(result.tasks, 2);
    const expected = createHash('sha256').update(bigContent()).digest('hex');
    assert.equal(readFileSync(join(shared, 'digest.txt'), 'utf8'), `${BIG_BYTES} ${expected}\n`);
    assert.equal(result.members.reduce((n, m) => n + m.bytesPeer, 0), BIG_BYTES, 'fetched once, peer to peer');
    assert.equal(result.members.reduce((n, m) => n + m.bytesToShared, 0), Buffer.byteLength(`${BIG_BYTES} ${expected}\n`), 'only the final output reached shared storage');
  });

  it('a command that fails every time fails the workflow, naming the task', T, async () => {
    const builder = new WorkflowBuilder('broken').command('boom', ['sh', '-c', 'echo nope >&2; exit 3'], { outputs: ['x'] });
    await assert.rejects(runWorkflow(fixture.cluster, builder.build(), { builder, shared: fresh(), nodes: 2, maxAttempts: 2 }), /task boom failed 2 times \(on \S+, \S+\): sh exited with code 3; the end of its stderr \(logs\/boom\.err\): nope$/);
  });
});
