/**
 * The examples of docs/workflow.md run: word-count.ts prints the counts computed by hand; mosaic.ts
 * (tasks added at run time) finds the overlapping tiles worked out by hand, adds a task per pair, and
 * run again in the same directory has nothing to do.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { childEnv } from '../../support/child-env.js';

describe('examples/workflow/word-count', () => {
  it('prints 4 distinct words, apple the most frequent (pear apple fig apple kiwi fig: apple and fig twice, apple first)', { timeout: 120_000 }, async () => {
    const script = fileURLToPath(new URL('../../../examples/workflow/word-count.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { env: childEnv({ TIDEPOOL_LOG: 'error' }) });
    assert.deepEqual(JSON.parse(stdout), { tasks: 4, distinct: 4, top: 'apple' });
  });
});

describe('examples/workflow/mosaic', () => {
  it('tiles 0-1, 1-2 and 3-4 overlap (spans 0-10, 8-18, 16-26, 30-35, 33-37): 3 diff tasks added, fit (3-1)*2 + (2-3)*2 + (4-7)*2 = -4; again: nothing to do', { timeout: 180_000 }, async () => {
    const script = fileURLToPath(new URL('../../../examples/workflow/mosaic.ts', import.meta.url));
    const shared = mkdtempSync(join(tmpdir(), 'mosaic-'));
    try {
      const run = async () => JSON.parse((await promisify(execFile)(process.execPath, ['--import', 'tsx', script, shared], { env: childEnv({ TIDEPOOL_LOG: 'error' }) })).stdout) as unknown;
      assert.deepEqual(await run(), { tasks: 5 + 1 + 3 + 1, pairs: ['0-1', '1-2', '3-4'], fit: -4 });
      assert.deepEqual(await run(), { tasks: 0, nothingToDo: true, pairs: ['0-1', '1-2', '3-4'], fit: -4 });
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });
});
