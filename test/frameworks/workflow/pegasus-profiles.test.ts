/**
 * What a Pegasus job says it needs, read from its profiles: cores, memory and runtime (pegasus), a
 * time limit (globus or pegasus maxwalltime, in minutes), HTCondor's request_cpus and request_memory;
 * in DAX XML and in YAML alike, with a bad value refused at its file and line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';

const dax = (profiles: string) => `<?xml version="1.0"?>
<adag version="3.6" name="p">
  <job id="a" name="prog">
${profiles}
  </job>
</adag>
`;

describe('Pegasus profiles', () => {
  it('DAX: pegasus cores, memory and runtime, globus maxwalltime; condor request_cpus and request_memory', () => {
    const w = parseWorkflow(dax(`    <profile namespace="pegasus" key="cores">2</profile>
    <profile namespace="pegasus" key="memory">512</profile>
    <profile namespace="pegasus" key="runtime">30</profile>
    <profile namespace="globus" key="maxwalltime">1.5</profile>
    <profile namespace="env" key="PATH">/bin</profile>`), 'p.xml');
    const t = w.tasks[0]!;
    assert.deepEqual({ cores: t.cores, memoryMb: t.memoryMb, runtime: t.runtime, timeoutSeconds: t.timeoutSeconds }, { cores: 2, memoryMb: 512, runtime: 30, timeoutSeconds: 90 });
    const c = parseWorkflow(dax(`    <profile namespace="condor" key="request_cpus">4</profile>
    <profile namespace="condor" key="request_memory">2048</profile>`), 'c.xml').tasks[0]!;
    assert.deepEqual({ cores: c.cores, memoryMb: c.memoryMb }, { cores: 4, memoryMb: 2048 });
  });

  it('YAML: the same profiles by namespace', () => {
    const w = parseWorkflow(`pegasus: '5.0'
name: p
jobs:
  - type: job
    id: a
    name: prog
    arguments: []
    uses: []
    profiles:
      pegasus: { cores: 3, memory: 100 }
      globus: { maxwalltime: 2 }
jobDependencies: []
`, 'p.yml');
    const t = w.tasks[0]!;
    assert.deepEqual({ cores: t.cores, memoryMb: t.memoryMb, timeoutSeconds: t.timeoutSeconds }, { cores: 3, memoryMb: 100, timeoutSeconds: 120 });
  });

  it('a bad value is refused at its file and line, naming the job', () => {
    assert.throws(() => parseWorkflow(dax('    <profile namespace="pegasus" key="cores">two</profile>'), 'bad.xml'), /^WorkflowError: bad\.xml:4: job a: pegasus cores profile "two" is not a whole number of cores$/);
    assert.throws(() => parseWorkflow(dax('    <profile namespace="globus" key="maxwalltime">-1</profile>'), 'bad.xml'), /^WorkflowError: bad\.xml:4: job a: globus maxwalltime profile "-1" is not a number of minutes$/);
  });
});
