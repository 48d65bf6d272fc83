/**
 * A Pegasus DAX 3.6 run for real with its catalogs, on an embedded cluster: shell scripts the test
 * writes are the executables — one named by the DAX's own `<executable>` entry, one by a YAML
 * transformation catalog file and one by a 4.x text one; an input comes from the DAX's own `<file>`
 * entry and one from a 4.x replica catalog file, both outside the shared directory; a YAML site
 * catalog names the shared directory (no --shared) and the scratch where tasks run. `<stdin>`,
 * `<stdout>`, `<stderr>` redirects and `<file>` references in arguments are followed; outputs, the
 * redirected files and the task logs are checked byte for byte. A missing executable, transformation
 * or input is refused before anything runs, naming the task and its line; `tidepool workflow validate`
 * finds the same (built CLI: `npm run build` first).
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { parseWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { assertCleanError, tidepool } from '../../support/cli.js';

const T = { timeout: 180_000 };

describe('Pegasus catalogs and redirects, run for real', () => {
  const root = mkdtempSync(join(tmpdir(), 'wf-catalogs-'));
  const bin = join(root, 'bin');
  const elsewhere = join(root, 'elsewhere');
  const shared = join(root, 'shared');
  const scratch = join(root, 'scratch');
  let cluster: Cluster;
  const script = (name: string, body: string) => {
    const path = join(bin, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const dax = (upper: string) => `<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6" name="catalogs">
  <file name="extra.txt">
    <pfn url="${pathToFileURL(join(elsewhere, 'extra.txt')).href}" site="local"/>
  </file>
  <executable namespace="demo" name="upper" version="1.0" installed="true">
    <pfn url="${pathToFileURL(upper).href}" site="local"/>
  </executable>
  <job id="ID01" namespace="demo" name="upper" version="1.0">
    <stdin name="words.txt" link="input"/>
    <stdout name="up.txt" link="output"/>
    <uses name="words.txt" link="input"/>
    <uses name="up.txt" link="output"/>
  </job>
  <job id="ID02" name="count">
    <argument>-i <file name="up.txt"/> -o <file name="count.txt"/></argument>
    <uses name="up.txt" link="input"/>
    <uses name="count.txt" link="output"/>
  </job>
  <job id="ID03" name="join">
    <argument><file name="count.txt"/> <file name="extra.txt"/> <file name="joined.txt"/></argument>
    <stderr name="join.err" link="output"/>
    <uses name="count.txt" link="input"/>
    <uses name="extra.txt" link="input"/>
    <uses name="joined.txt" link="output"/>
  </job>
</adag>
`;
  let upper: string;
  const files = () => ({ tc: [join(root, 'tc.yml'), join(root, 'tc.txt')], rc: [join(root, 'rc.txt')], sc: [join(root, 'sc.yml')] });

  before(async () => {
    for (const d of [bin, elsewhere, shared, scratch]) mkdirSync(d, { recursive: true });
    upper = script('upper.sh', 'tr a-z A-Z; echo "upper read its stdin" >&2');
    script('count.sh', '[ "$1" = -i ] && [ "$3" = -o ] || exit 9\necho "counted in $(pwd)"\nwc -l < "$2" | tr -d " " > "$4"');
    script('join.sh', 'cat "$1" "$2" > "$3"; echo "joined $1 and $2" >&2; echo "to stdout"');
    writeFileSync(join(elsewhere, 'words.txt'), 'pear\napple\nfig\n');
    writeFileSync(join(elsewhere, 'extra.txt'), 'extra line\n');
    writeFileSync(join(root, 'wf.xml'), dax(upper));
    writeFileSync(join(root, 'tc.yml'), `pegasus: "5.0"\ntransformations:\n  - name: count\n    sites:\n      - name: local\n        pfn: ${join(bin, 'count.sh')}\n        type: installed\n`);
    writeFileSync(join(root, 'tc.txt'), `# Pegasus 4.x text format\ntr join {\n  site local {\n    pfn "${join(bin, 'join.sh')}"\n    arch "x86_64"\n    os "LINUX"\n    type "INSTALLED"\n  }\n}\n`);
    writeFileSync(join(root, 'rc.txt'), `words.txt ${pathToFileURL(join(elsewhere, 'words.txt')).href} site="local"\n`);
    writeFileSync(join(root, 'sc.yml'), `pegasus: "5.0"\nsites:\n  - name: local\n    directories:\n      - type: sharedScratch\n        path: ${shared}\n      - type: localScratch\n        path: ${scratch}\n`);
    cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
  });
  after(async () => {
    await cluster.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs end to end: executables from three catalogs, inputs from two, redirects and logs byte for byte', T, async () => {
    const file = join(root, 'wf.xml');
    const wf = parseWorkflow(readFileSync(file, 'utf8'), file);
    // All through the shared directory, so that the intermediate files can be read too.
    const result = await runWorkflow(cluster, wf, { file, shared, nodes: 2, catalogs: files(), storage: 'shared' });
    assert.equal(result.tasks, 3);
    assert.equal(readFileSync(join(shared, 'up.txt'), 'utf8'), 'PEAR\nAPPLE\nFIG\n', 'stdin and stdout redirected');
    assert.equal(readFileSync(join(shared, 'count.txt'), 'utf8'), '3\n', 'file references in arguments');
    assert.equal(readFileSync(join(shared, 'joined.txt'), 'utf8'), '3\nextra line\n');
    assert.equal(readFileSync(join(shared, 'join.err'), 'utf8'), 'joined count.txt and extra.txt\n', 'stderr redirected into an output');
    assert.equal(existsSync(join(shared, 'words.txt')), false, 'inputs were read where the replica catalogs put them');
    const logs = join(result.run!, 'logs');
    assert.deepEqual(readdirSync(logs).sort(), ['ID01.err', 'ID02.err', 'ID02.out', 'ID03.out'], 'a redirected stream has no log');
    assert.equal(readFileSync(join(logs, 'ID01.err'), 'utf8'), 'upper read its stdin\n');
    assert.match(readFileSync(join(logs, 'ID02.out'), 'utf8'), new RegExp(`^counted in ${scratch}/tidepool-workflow/\\S+\\n$`), 'tasks ran in the site\'s local scratch');
    assert.equal(readFileSync(join(logs, 'ID02.err'), 'utf8'), '');
    assert.equal(readFileSync(join(logs, 'ID03.out'), 'utf8'), 'to stdout\n');
    const again = await runWorkflow(cluster, wf, { file, shared, nodes: 2, catalogs: files(), storage: 'shared' });
    assert.equal(again.nothingToDo, true);
  });

  it('a missing executable, transformation or input is refused before anything runs, naming the task and its line', T, async () => {
    const check = async (text: string, catalogs: ReturnType<typeof files>, pattern: RegExp) => {
      const file = join(root, 'broken.xml');
      writeFileSync(file, text);
      const out = mkdtempSync(join(root, 'out-'));
      await assert.rejects(runWorkflow(cluster, parseWorkflow(text, file), { file, shared: out, nodes: 2, catalogs }), pattern);
      assert.deepEqual(readdirSync(out), [], 'nothing ran: no output, no run directory');
    };
    await check(dax(join(bin, 'no-such.sh')), files(), /broken\.xml:9: task ID01: program \S+no-such\.sh does not exist \(transformation demo::upper:1\.0, \S+broken\.xml:6, site local\)/);
    await check(dax(upper), { ...files(), tc: [join(root, 'tc.yml')] }, /broken\.xml:20: task ID03: transformation join is not in the transformation catalog/);
    await check(dax(upper), { ...files(), rc: [] }, /broken\.xml:9: task ID01: input words\.txt is not in the shared directory \S+/);
  });

  it('tidepool workflow validate finds the executables and inputs, and names what is missing; run takes the shared directory from the site catalog', T, async () => {
    const file = join(root, 'wf.xml');
    const flags = ['--tc', join(root, 'tc.yml'), '--tc', join(root, 'tc.txt'), '--rc', join(root, 'rc.txt'), '--sc', join(root, 'sc.yml')];
    const ok = await tidepool(['workflow', 'validate', file, ...flags, '--json']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual((JSON.parse(ok.stdout) as { checked: string[] }).checked, ['every program found (site local)', '2 inputs found']);
    assertCleanError(await tidepool(['workflow', 'validate', file, '--tc', join(root, 'tc.yml')]), /^error: \S+wf\.xml:20: task ID03: transformation join is not in the transformation catalog$/m);
    // Without --shared, run uses the site catalog's sharedScratch: where the first test's run left everything complete.
    const run = await tidepool(['workflow', 'run', file, ...flags, '--nodes', '1']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'catalogs: nothing to do: all 3 tasks are up to date\n');
  });
});
