/**
 * Edit and rerun as a user does it with the built CLI (`npm run build` first): a finished workflow
 * prints "nothing to do" and exits 0; `--dry-run` lists what would run and why; a missing input is
 * refused before anything runs, with FILE:LINE and the task that reads it (exit 2).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { assertCleanError, tidepool } from '../../support/cli.js';

const MONTAGE = new URL('../../data/workflows/pegasus-dax-2.1/Montage_25.xml', import.meta.url).pathname;

describe('tidepool workflow run, edited and run again', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'wf-rerun-cli-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('a complete workflow has nothing to do (exit 0); --dry-run names the task a deleted output needs', { timeout: 180_000 }, async () => {
    const shared = join(tmp, 'montage');
    const run = (...extra: string[]) => tidepool(['workflow', 'run', MONTAGE, '--replay', '0.001', '--nodes', '2', '--workers', '1', '--shared', shared, '--storage', 'shared', ...extra]);
    const first = await run('--json');
    assert.equal(first.code, 0, first.stderr);
    assert.equal((JSON.parse(first.stdout) as { completed: number }).completed, 25);
    const again = await run();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'test: nothing to do: all 25 tasks are up to date\n');
    const dry = await run('--dry-run', '--json');
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), { file: MONTAGE, workflow: 'test', tasks: 25, toRun: 0, upToDate: 25, nothingToDo: true, run: [] });
    unlinkSync(join(shared, 'shrunken_ID00023_ID00023.jpg'));
    const plan = await run('--dry-run');
    assert.equal(plan.code, 0, plan.stderr);
    assert.equal(plan.stdout, 'test: 1 of 25 tasks would run (24 up to date):\n  ID00024  output shrunken_ID00023_ID00023.jpg is missing\n');
    const rerun = await run('--json');
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual((({ completed, upToDate }) => ({ completed, upToDate }))(JSON.parse(rerun.stdout) as { completed: number; upToDate: number }), { completed: 1, upToDate: 24 });
  });

  it('a missing input is refused before anything runs, naming the task that reads it and its line', async () => {
    const dir = join(tmp, 'no-inputs');
    const file = join(tmp, 'sorting.xml');
    writeFileSync(file, '<adag version="2.1" name="sorting">\n  <job id="s1" name="sort">\n    <argument>-o sorted.txt words.txt</argument>\n    <uses file="words.txt" link="input"/>\n    <uses file="sorted.txt" link="output"/>\n  </job>\n</adag>\n');
    const r = await tidepool(['workflow', 'run', file, '--shared', dir, '--nodes', '1']);
    assertCleanError(r, new RegExp(`^error: ${file.replace(/[.]/g, '\\.')}:2: task s1: input words\\.txt is not in the shared directory ${dir.replace(/[.]/g, '\\.')}$`, 'm'));
  });
});
