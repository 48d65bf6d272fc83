/**
 * Formats and quirks beyond the data set: DAX 3.x (`<uses name=…>`, runtime profiles, `uses`
 * inside transformations that are not job I/O), Pegasus 5 YAML, explicit edges not implied by
 * files and the reverse, the builder API, and refusals with file:line and the offending task/file.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { WorkflowError } from '../../../src/frameworks/workflow/workflow-error.js';

const DAX3 = `<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6" name="diamond">
  <transformation namespace="ex" name="preprocess" version="4.0">
    <uses name="keg-config.txt" link="input"/>
  </transformation>
  <job id="ID3" name="analyze">
    <argument>-i <file name="f.c1"/> <file name="f.c2"/> -o <file name="f.d"/></argument>
    <profile namespace="pegasus" key="runtime">30</profile>
    <uses name="f.c1" link="input" size="10"/>
    <uses name="f.c2" link="input" size="10"/>
    <uses name="f.d" link="output" size="40"/>
  </job>
  <job id="ID1" name="preprocess">
    <profile namespace="pegasus" key="runtime">10</profile>
    <uses name="f.a" link="input" size="100"/>
    <uses name="f.b" link="output" size="20"/>
  </job>
  <job id="ID2a" name="findrange"><profile namespace="pegasus" key="runtime">5</profile>
    <uses name="f.b" link="input"/><uses name="f.c1" link="output" size="10"/></job>
  <job id="ID2b" name="findrange"><profile namespace="pegasus" key="runtime">7</profile>
    <uses name="f.b" link="input"/><uses name="f.c2" link="output" size="10"/></job>
  <child ref="ID3"><parent ref="ID2a"/></child>
</adag>
`;

const YAML = `pegasus: "5.0"
name: diamond
jobs:
  - type: job
    name: preprocess
    id: ID1
    arguments: [-i, f.a, -o, f.b]
    profiles: { pegasus: { runtime: "10" } }
    uses:
      - { lfn: f.a, type: input, size: 100 }
      - { lfn: f.b, type: output, size: 20 }
  - type: job
    name: report
    id: ID2
    arguments: []
    uses: []
jobDependencies:
  - id: ID1
    children: [ID2]
transformationCatalog:
  transformations:
    - name: preprocess
      requires: [keg]
`;

function refusal(text: string, file = 'wf.xml'): WorkflowError {
  try {
    parseWorkflow(text, file);
  } catch (err) {
    assert.ok(err instanceof WorkflowError, `a WorkflowError, got ${String(err)}`);
    return err;
  }
  assert.fail('the workflow was accepted');
}

describe('workflow formats and quirks', () => {
  it('DAX 3.6: names, runtime profiles, arguments with <file/>, transformation uses ignored, file-implied edges added', () => {
    const wf = parseWorkflow(DAX3, 'diamond.dax');
    assert.equal(wf.format, 'Pegasus DAX 3.6');
    assert.equal(wf.counts.tasks, 4);
    assert.equal(wf.counts.explicitEdges, 1, 'only ID2a -> ID3 is written');
    assert.equal(wf.counts.edges, 4, 'ID1 -> ID2a, ID1 -> ID2b, ID2a -> ID3, ID2b -> ID3 from files');
    assert.equal(wf.counts.files, 5, 'keg-config.txt of the transformation is not job I/O');
    assert.equal(wf.counts.criticalPath, 10 + 7 + 30);
    const analyze = wf.tasks[wf.taskIndex('ID3')]!;
    assert.deepEqual(analyze.command, { program: 'analyze', args: ['-i', 'f.c1', 'f.c2', '-o', 'f.d'] });
    assert.equal(wf.files.find((f) => f.name === 'f.a')!.size, 100);
  });

  it('an explicit edge not implied by files is kept (Pegasus 5 YAML)', () => {
    const wf = parseWorkflow(YAML, 'diamond.yml');
    assert.equal(wf.format, 'Pegasus YAML 5.0');
    assert.deepEqual(wf.tasks[wf.taskIndex('ID2')]!.parents, [wf.taskIndex('ID1')]);
    assert.equal(wf.counts.files, 2, 'requires of the catalog are not files');
    assert.equal(wf.counts.criticalPath, 10);
  });

  it('the builder API: command and function tasks, dependencies from files', () => {
    const wf = new WorkflowBuilder('count')
      .file('words.txt', 12)
      .command('sort', ['sort', 'words.txt', '-o', 'sorted.txt'], { inputs: ['words.txt'], outputs: ['sorted.txt'] })
      .fn('count', { module: 'file:///count.js', export: 'count' }, { inputs: ['sorted.txt'], outputs: ['count.txt'] })
      .build();
    assert.deepEqual(wf.tasks[1]!.parents, [0]);
    assert.equal(wf.tasks[0]!.command!.program, 'sort');
    assert.equal(wf.tasks[1]!.fn!.export, 'count');
  });

  it('malformed XML is refused with its line', () => {
    const err = refusal('<adag version="2.1">\n  <job id="a" name="x">\n  </jb>\n</adag>\n');
    assert.match(err.message, /^wf\.xml:3: malformed XML/);
  });

  it('a cycle is refused naming its tasks, at the line of one of them', () => {
    const text = '<adag version="2.1">\n<job id="a" name="x"/>\n<job id="b" name="y"/>\n<job id="c" name="z"/>\n' +
      '<child ref="b"><parent ref="a"/><parent ref="c"/></child>\n<child ref="c"><parent ref="b"/></child>\n</adag>\n';
    const err = refusal(text);
    assert.match(err.message, /^wf\.xml:[34]: task [bc]: dependency cycle: (b -> c -> b|c -> b -> c)$/);
  });

  it('a cycle through files is refused too', () => {
    const err = refusal(JSON.stringify({ schemaVersion: '1.4', name: 'loop', workflow: { tasks: [
      { name: 'p', parents: [], files: [{ link: 'input', name: 'q.out' }, { link: 'output', name: 'p.out' }] },
      { name: 'q', parents: [], files: [{ link: 'input', name: 'p.out' }, { link: 'output', name: 'q.out' }] },
    ] } }, null, 1), 'loop.json');
    assert.match(err.message, /^loop\.json:\d+: task [pq]: dependency cycle/);
  });

  it('an unknown parent is refused naming the task and the parent', () => {
    const err = refusal('<adag version="2.1">\n<job id="a" name="x"/>\n<child ref="a"><parent ref="ghost"/></child>\n</adag>\n');
    assert.match(err.message, /^wf\.xml:2: task a: parent "ghost" is not a task of this workflow$/);
  });

  it('a duplicate task id is refused naming the first declaration, at the line of the second', () => {
    const err = refusal('<adag version="2.1">\n<job id="a" name="x"/>\n<job id="b" name="y"/>\n<job id="a" name="z"/>\n</adag>\n');
    assert.match(err.message, /^wf\.xml:4: task a: duplicate task id \(first declared at task 1\)$/);
  });

  it('a WfFormat 1.5 file that breaks the schema is refused naming the task and field', () => {
    const doc = { name: 'x', schemaVersion: '1.5', workflow: { specification: { tasks: [{ name: 't1', id: 't1', children: [], parents: [], inputFiles: [], outputFiles: 'oops' }], files: [] }, execution: { makespanInSeconds: 1, executedAt: 'now', tasks: [{ id: 't1', runtimeInSeconds: 1 }] } } };
    const err = refusal(JSON.stringify(doc, null, 2), 'bad.json');
    assert.match(err.message, /^bad\.json:\d+: task t1: \/workflow\/specification\/tasks\/0\/outputFiles must be array \(WfFormat schema\)$/);
  });

  it('malformed JSON and YAML are refused with a line', () => {
    assert.match(refusal('{\n  "workflow": {\n    "tasks": [,]\n  }\n}\n', 'a.json').message, /^a\.json:3: malformed JSON/);
    assert.match(refusal('jobs:\n  - id: a\n    uses: [\n', 'a.yml').message, /^a\.yml:\d+: malformed YAML/);
    assert.match(refusal('jobs:\n  - id: a\n    uses:\n      - { lfn: x, type: sideways }\n', 'b.yml').message, /^b\.yml:2: task a: file x: type must be/);
  });
});
