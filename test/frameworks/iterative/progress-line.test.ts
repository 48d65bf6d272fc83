/** The iterative CLI's progress bar: iterations done and the predicted time left, hand-computed from node figures. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressLine } from '../../../src/frameworks/iterative/progress-line.js';

test('two nodes, three threads: done summed over nodes, time left = what is left ÷ the summed speeds', () => {
  // 600,000 + 400,000 of 2,000,000 done; 100,000 + 50,000 + 50,000 it/s → 1,000,000 left in 5 s.
  const line = progressLine([{ done: 600_000, speeds: [100_000, 50_000] }, { done: 400_000, speeds: [50_000] }], 2_000_000, 'histories');
  assert.equal(line, '  [##########..........]  1,000,000 / 2,000,000 histories (50 %)  200,000/s  ~5 s left');
});

test('the prediction rounds up, and the bar fills by whole twentieths', () => {
  // 99 of 1,000 done at 40 it/s: 901 / 40 = 22.5 s → ~23 s; 99/1000 of 20 cells = 1.98 → 1 cell.
  assert.equal(progressLine([{ done: 99, speeds: [40] }], 1000, 'paths'), '  [#...................]  99 / 1,000 paths (9 %)  40/s  ~23 s left');
});

test('no speed measured yet: no prediction; more progress than iterations (a block rerun after a crash) shows the total', () => {
  assert.equal(progressLine([{ done: 0, speeds: [0, 0] }], 500, 'histories'), '  [....................]  0 / 500 histories (0 %)  0/s');
  assert.equal(progressLine([{ done: 450, speeds: [30] }, { done: 100, speeds: [0] }], 500, 'histories'), '  [####################]  500 / 500 histories (100 %)  30/s  ~0 s left');
});
