/**
 * The WfFormat 1.5 schema check that loads a million tasks quickly refuses what the published schema
 * refuses, with ajv's own words, wherever in the big arrays the fault is (the faults below are in the
 * second item: the first of each array is checked by ajv with the rest of the document), and accepts
 * what the schema accepts, unusual but valid records included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wfFormatSchemaError } from '../../../src/frameworks/workflow/wfformat-schema.js';

type Doc = { name: string; schemaVersion: string; workflow: { specification: { tasks: Record<string, unknown>[]; files: Record<string, unknown>[] }; execution: { makespanInSeconds: number; executedAt: string; tasks: Record<string, unknown>[] } } };

function doc(): Doc {
  return {
    name: 'pair', schemaVersion: '1.5',
    workflow: {
      specification: {
        tasks: [
          { name: 'a', id: 'a', parents: [], children: ['b'], inputFiles: ['in.txt'], outputFiles: ['mid.txt'] },
          { name: 'b', id: 'b', parents: ['a'], children: [], inputFiles: ['mid.txt'], outputFiles: ['out.txt'] },
        ],
        files: [{ id: 'in.txt', sizeInBytes: 1 }, { id: 'mid.txt', sizeInBytes: 2 }, { id: 'out.txt', sizeInBytes: 3 }],
      },
      execution: { makespanInSeconds: 2, executedAt: 'now', tasks: [{ id: 'a', runtimeInSeconds: 1 }, { id: 'b', runtimeInSeconds: 1 }] },
    },
  };
}

function error(change: (d: Doc) => void): string | undefined {
  const d = doc();
  change(d);
  const e = wfFormatSchemaError(d);
  return e && `${e.instancePath} ${e.message}`;
}

describe('WfFormat 1.5 schema check', () => {
  it('accepts a valid document, and unusual valid records (extra task fields, full execution records, non-ASCII names)', () => {
    assert.equal(error(() => undefined), undefined);
    assert.equal(error((d) => {
      d.workflow.specification.tasks[1]!.category = 'merge';
      d.workflow.specification.tasks[1]!.parents = [''];
      d.workflow.execution.tasks[1] = { id: 'b', runtimeInSeconds: 0.5, executedAt: 'then', coreCount: 2, avgCPU: 90, command: { program: 'merge', arguments: ['-v'] }, machines: ['m1'] };
      d.workflow.specification.tasks[1]!.name = 'fusión';
    }), undefined);
  });

  it('refuses each fault in the big arrays with ajv\'s message', () => {
    const spec = (d: Doc) => d.workflow.specification;
    const cases: [string, (d: Doc) => void][] = [
      ['/workflow/specification/tasks/1/parents/0 must match pattern "^[0-9a-zA-Z-_.#]*$"', (d) => (spec(d).tasks[1]!.parents = ['a b'])],
      ['/workflow/specification/tasks/1/children must be array', (d) => (spec(d).tasks[1]!.children = 'none')],
      ['/workflow/specification/tasks/1 must have required property \'children\'', (d) => delete spec(d).tasks[1]!.children],
      ['/workflow/specification/tasks/1/id must NOT have fewer than 1 characters', (d) => (spec(d).tasks[1]!.id = '')],
      ['/workflow/specification/tasks/1/inputFiles/0 must NOT have fewer than 1 characters', (d) => (spec(d).tasks[1]!.inputFiles = [''])],
      ['/workflow/specification/tasks/1/outputFiles/0 must match pattern "^[0-9a-zA-Z-_./:#]*$"', (d) => (spec(d).tasks[1]!.outputFiles = ['sortie é'])],
      ['/workflow/specification/tasks/1/outputFiles must be array', (d) => (spec(d).tasks[1]!.outputFiles = null)],
      ['/workflow/specification/files/2/sizeInBytes must be >= 0', (d) => (spec(d).files[2]!.sizeInBytes = -1)],
      ['/workflow/specification/files/2/sizeInBytes must be integer', (d) => (spec(d).files[2]!.sizeInBytes = 1.5)],
      ['/workflow/specification/files/1/id must match pattern "^[0-9a-zA-Z-_./:#]*$"', (d) => (spec(d).files[1]!.id = 'mid txt')],
      ['/workflow/execution/tasks/1 must have required property \'runtimeInSeconds\'', (d) => delete d.workflow.execution.tasks[1]!.runtimeInSeconds],
      ['/workflow/execution/tasks/1/runtimeInSeconds must be number', (d) => (d.workflow.execution.tasks[1]!.runtimeInSeconds = '1')],
      ['/workflow/execution/tasks/1/command/arguments/0 must NOT have fewer than 1 characters', (d) => (d.workflow.execution.tasks[1]!.command = { program: 'x', arguments: [''] })],
      ['/workflow/execution/tasks/1/coreCount must be >= 1', (d) => (d.workflow.execution.tasks[1]!.coreCount = 0)],
      ['/workflow/specification/tasks must NOT have fewer than 1 items', (d) => (spec(d).tasks = [])],
      ['/schemaVersion must be equal to one of the allowed values', (d) => (d.schemaVersion = '1.4')],
    ];
    for (const [message, change] of cases) assert.equal(error(change), message);
  });
});
