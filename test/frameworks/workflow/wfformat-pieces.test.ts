/**
 * Reading WfFormat 1.5 a piece at a time: item boundaries that are not (a "},{" or "}]" inside a
 * string, a nested array of objects) are never taken for one; sections in another order are read the
 * same; an array where none is expected makes the pieces give up and the text is read whole.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';
import { syntheticWfFormat } from '../../../src/frameworks/workflow/synthetic.js';
import { readInPieces, type BigArray } from '../../../src/frameworks/workflow/wfformat-pieces.js';

const TASKS = 20_000; // about 4 MB: several pieces per array
const TRICKY = 'odd },{"id":"x"}] name';

function tricky(): string {
  // Near every megabyte a task whose name looks like an item boundary, and one with a nested array of objects.
  let text = syntheticWfFormat({ tasks: TASKS, width: 100 });
  for (const t of [4000, 5000, 9000, 14000]) text = text.replace(`{"name":"t${t}",`, `{"name":${JSON.stringify(`${TRICKY} ${t}`)},"extra":[{"a":[{}]},{"b":1}],`);
  return text;
}

function count(text: string): Record<BigArray, number> | undefined {
  const seen: Record<BigArray, number> = { specTasks: 0, specFiles: 0, execTasks: 0 };
  return readInPieces(text, (array) => ++seen[array] > 0) && seen;
}

describe('WfFormat 1.5 in pieces', () => {
  it('strings and nested values that look like item boundaries are not cut', () => {
    const text = tricky();
    assert.deepEqual(count(text), { specTasks: TASKS, specFiles: TASKS + 100, execTasks: TASKS });
    const wf = parseWorkflow(text, 'tricky.json');
    assert.equal(wf.counts.tasks, TASKS);
    assert.equal(wf.tasks[wf.taskIndex('t5000')]!.name, `${TRICKY} 5000`);
    assert.equal(wf.counts.edges, 100 * 2 * 199 - 199, 'two parents per task above the first level, one at each level edge');
  });

  it('execution before specification reads the same', () => {
    const text = syntheticWfFormat({ tasks: 3000, width: 100 });
    const exec = text.slice(text.indexOf('"execution":'), text.length - 2);
    const swapped = text.replace(`,${exec}`, '').replace('"workflow":{', `"workflow":{${exec},`);
    assert.deepEqual(count(swapped), { specTasks: 3000, specFiles: 3100, execTasks: 3000 });
    assert.deepEqual(parseWorkflow(swapped, 's.json').counts, parseWorkflow(text, 't.json').counts);
  });

  it('a "tasks" array in an unexpected place: the pieces give up, the text is read whole', () => {
    const text = syntheticWfFormat({ tasks: 3000, width: 100 }).replace('"schemaVersion":"1.5",', '"schemaVersion":"1.5","author":{"name":"a","email":"a@b","tasks":[{"x":1}]},');
    assert.equal(count(text), undefined);
    assert.equal(parseWorkflow(text, 'a.json').counts.tasks, 3000);
  });
});
