/** examples/workflow/word-count.ts (the example of docs/workflow.md) runs and prints the counts computed by hand. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
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
