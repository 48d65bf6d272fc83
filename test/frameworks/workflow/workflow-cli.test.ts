/**
 * `tidepool workflow` as a user runs it (built CLI: `npm run build` first): validate and info on real
 * files, a replay run with --json, and bad input refused with FILE:LINE and exit code 2.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertCleanError, tidepool } from '../../support/cli.js';

const DIR = fileURLToPath(new URL('../../data/workflows/', import.meta.url));

describe('tidepool workflow', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'wf-cli-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('validate and info report the counts and critical path', async () => {
    const v = await tidepool(['workflow', 'validate', DIR + 'pegasus-dax-2.1/HEFT_paper.xml', '--json']);
    assert.equal(v.code, 0, v.stderr);
    const out = JSON.parse(v.stdout) as { tasks: number; edges: number; criticalPath: number; warnings: string[] };
    assert.equal(out.tasks, 10);
    assert.equal(out.edges, 15);
    assert.equal(out.criticalPath, 66);
    assert.match(out.warnings.join(), /jobCount says 25/);
    const i = await tidepool(['workflow', 'info', DIR + 'wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-005d-001.json']);
    assert.equal(i.code, 0, i.stderr);
    assert.match(i.stdout, /58 tasks, 114 dependencies/);
    assert.match(i.stdout, /critical path 21\.39 s/);
    assert.match(i.stdout, /mDiffFit: \d+ tasks/);
  });

  it('run --replay --json completes every task and counts bytes', async () => {
    const r = await tidepool(['workflow', 'run', DIR + 'pegasus-dax-2.1/Montage_25.xml', '--replay', '0.001', '--nodes', '2', '--workers', '1', '--shared', join(tmp, 'shared'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { tasks: number; completed: number; bytesToShared: number; bytesFromShared: number };
    assert.equal(out.completed, 25);
    assert.ok(out.bytesToShared > 0 && out.bytesFromShared > 0);
  });

  it('a malformed or cyclic file is refused with FILE:LINE and the task, exit 2', async () => {
    const bad = join(tmp, 'cyclic.xml');
    writeFileSync(bad, '<adag version="2.1">\n<job id="a" name="x"/>\n<job id="b" name="y"/>\n<child ref="a"><parent ref="b"/></child>\n<child ref="b"><parent ref="a"/></child>\n</adag>\n');
    assertCleanError(await tidepool(['workflow', 'validate', bad]), new RegExp(`^error: ${bad.replace(/[.]/g, '\\.')}:[23]: task [ab]: dependency cycle`));
    const broken = join(tmp, 'broken.xml');
    writeFileSync(broken, '<adag version="2.1">\n<job id="a" name="x">\n</adag>\n');
    assertCleanError(await tidepool(['workflow', 'run', broken, '--replay', '1']), /^error: .*broken\.xml:3: malformed XML/);
    assertCleanError(await tidepool(['workflow', 'run', DIR + 'pegasus-dax-2.1/HEFT_paper.xml', '--replay', 'fast']), /--replay: "fast" is not a number ≥ 0/);
    assertCleanError(await tidepool(['workflow', 'run', DIR + 'pegasus-dax-2.1/HEFT_paper.xml', '--replay', '1', '--ame-unit', '8:9']), /^error: --ame-unit: AME unit: 9 shards per unit of 8 nodes \(at most one per node\)/);
    assertCleanError(await tidepool(['workflow', 'run', DIR + 'pegasus-dax-2.1/HEFT_paper.xml', '--replay', '1', '--ame-unit', 'many']), /--ame-unit: "many" is not NODES\[:SHARDS\[:DISPATCHERS\]\]/);
  });
});
