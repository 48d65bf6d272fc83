/**
 * What bench/malleable-rescale.ts's Table III rests on: the plain sequential programs (bench/apps/plain/)
 * compute exactly what the malleable applications compute — bit for bit, reductions' histories
 * included — and the line diff that counts the lines the malleable versions change (on hand-made cases).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leanmd } from '../../bench/apps/plain/leanmd.js';
import { lulesh } from '../../bench/apps/plain/lulesh.js';
import { stencil2d } from '../../bench/apps/plain/stencil2d.js';
import { wave2d } from '../../bench/apps/plain/wave2d.js';
import { lineDiff, sourceLines } from '../../bench/line-diff.js';
import { MALLEABLE_APPS } from '../../src/frameworks/malleable/applications.js';
import { loadMalleableApp } from '../../src/frameworks/malleable/malleable-app.js';
import { runSequential } from '../../src/frameworks/malleable/sequential.js';
import { plainStencil, plainWave } from '../frameworks/malleable/plain-grids.js';

describe('the plain programs of Table III', () => {
  const cases: Array<[string, (p: never) => unknown, unknown]> = [
    ['stencil', stencil2d, { grid: 37, blocks: 5, iterations: 23 }],
    ['wave', wave2d, { grid: 40, blocks: 4, iterations: 31 }],
    ['leanmd', leanmd, { cells: [3, 4, 3], atomsPerSide: 2, steps: 20, dt: 0.01 }],
    ['lulesh', lulesh, { elements: 333, blocks: 7, steps: 150 }],
  ];
  for (const [name, plain, params] of cases) {
    it(`${name}: the plain program's result is the malleable application's, bit for bit`, async () => {
      const app = await loadMalleableApp(MALLEABLE_APPS[name]!);
      assert.equal(JSON.stringify(plain(params as never)), JSON.stringify(runSequential(app, params)));
    });
  }

  it('Stencil2D and Wave2D over blocks equal the whole-grid solvers (independent references)', () => {
    assert.equal(stencil2d({ grid: 37, blocks: 5, iterations: 23 }).checksum, plainStencil(37, 23, 5).checksum);
    assert.equal(wave2d({ grid: 40, blocks: 4, iterations: 31 }).checksum, plainWave(40, 31, 4).checksum);
  });
});

describe('the line diff', () => {
  it('counts source lines: not blank, not only a comment', () => {
    assert.deepEqual(sourceLines('/**\n * doc\n */\nconst a = 1; // note\n\n  // only a comment\n  return a;\n'), ['const a = 1; // note', 'return a;']);
  });

  it('finds the lines added, changed and removed (a longest common subsequence)', () => {
    assert.deepEqual(lineDiff(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e']), { added: ['x', 'e'], removed: ['b'] });
    assert.deepEqual(lineDiff(['a', 'b'], ['a', 'b']), { added: [], removed: [] });
    assert.deepEqual(lineDiff([], ['a']), { added: ['a'], removed: [] });
    assert.deepEqual(lineDiff(['p', 'q', 'r'], ['r', 'p', 'q']), { added: ['r'], removed: ['r'] });
  });
});
