/**
 * The compiled copy of a large workflow (compiled-workflow.ts): written on the first load, read instead
 * of the file while the file (and every sub-workflow file it includes) is as stamped, with task ids and
 * lines working as after a parse; a touched or edited file, an edited sub-workflow, another V8 or a
 * damaged copy make the file be parsed again. That the copy was read is shown by altering it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { deserialize, serialize } from 'node:v8';
import { COMPILED_MIN_TASKS, compiledPath, loadCompiled } from '../../../src/frameworks/workflow/compiled-workflow.js';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../../../src/frameworks/workflow/synthetic.js';
import type { Workflow } from '../../../src/frameworks/workflow/workflow.js';

const same = (a: Workflow, b: Workflow) => {
  assert.deepEqual(a.tasks, b.tasks);
  assert.deepEqual(a.files, b.files);
  assert.deepEqual(a.order, b.order);
  assert.deepEqual(a.counts, b.counts);
  assert.equal(a.name, b.name);
};

/** Alters the kept copy: the first task's runtime becomes 12345 (a parse would never say so). */
function alterKept(state: string, file: string): void {
  const path = compiledPath(state, file);
  const kept = deserialize(readFileSync(path)) as { tasks: Uint8Array[] };
  const first = deserialize(kept.tasks[0]!) as Workflow['tasks'];
  first[0]!.runtime = 12345;
  kept.tasks[0] = serialize(first);
  writeFileSync(path, serialize(kept));
}

describe('compiled copies of large workflows', () => {
  const dirs: string[] = [];
  const fresh = () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'wf-compiled-')));
    return dirs.at(-1)!;
  };
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('read instead of the file while it is unchanged; parsed again when it changes', async () => {
    const dir = fresh();
    const state = join(dir, 'state');
    const file = join(dir, 'big.json');
    // Larger than one slice of the copy (20,000 tasks), so that slices are put back together.
    writeFileSync(file, syntheticWfFormat({ tasks: 45_000, width: 1000, runtime: 1, fileBytes: 10 }));
    const parsed = await loadWorkflow(file);
    const first = await loadCompiled(file, state);
    same(first, parsed);
    const again = await loadCompiled(file, state);
    same(again, parsed);
    assert.equal(again.taskIndex('t44999'), 44999);
    assert.equal(again.taskIndex('nope'), -1);
    assert.equal(again.lineOf?.('t5'), parsed.lineOf?.('t5'));

    alterKept(state, file);
    assert.equal((await loadCompiled(file, state)).tasks[0]!.runtime, 12345, 'the copy was read');
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    assert.equal((await loadCompiled(file, state)).tasks[0]!.runtime, 1, 'a touched file is parsed again');
    alterKept(state, file);
    assert.equal((await loadCompiled(file, state, { keep: false })).tasks[0]!.runtime, 12345, 'the copy written after the touch');

    // Another V8 (another Node.js): parsed again.
    const kept = deserialize(readFileSync(compiledPath(state, file))) as { v8: string };
    kept.v8 = 'other';
    writeFileSync(compiledPath(state, file), serialize(kept));
    same(await loadCompiled(file, state), parsed);
    // A damaged copy: parsed again.
    writeFileSync(compiledPath(state, file), 'not a copy');
    same(await loadCompiled(file, state), parsed);
  });

  it('small workflows are not kept; an edited sub-workflow file makes a large parent be parsed again', async () => {
    const dir = fresh();
    const state = join(dir, 'state');
    const small = join(dir, 'small.json');
    writeFileSync(small, syntheticWfFormat({ tasks: 100, width: 10 }));
    await loadCompiled(small, state);
    assert.throws(() => readFileSync(compiledPath(state, small)), /ENOENT/);

    writeFileSync(join(dir, 'sub.json'), syntheticWfFormat({ tasks: COMPILED_MIN_TASKS, width: 1000, runtime: 1 }));
    const parent = join(dir, 'parent.yml');
    writeFileSync(parent, 'pegasus: "5.0"\nname: parent\njobs:\n  - type: pegasusWorkflow\n    id: big\n    file: sub.json\n');
    const first = await loadCompiled(parent, state);
    assert.equal(first.tasks.length, COMPILED_MIN_TASKS);
    alterKept(state, parent);
    assert.equal((await loadCompiled(parent, state)).tasks[0]!.runtime, 12345, 'the copy was read');
    writeFileSync(join(dir, 'sub.json'), syntheticWfFormat({ tasks: COMPILED_MIN_TASKS, width: 1000, runtime: 2 }));
    assert.equal((await loadCompiled(parent, state)).tasks[0]!.runtime, 2, 'the edited sub-workflow was read');
  });
});
