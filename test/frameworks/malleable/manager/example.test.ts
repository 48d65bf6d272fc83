import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { childEnv } from '../../../support/child-env.js';

const run = promisify(execFile);

it('examples/malleable-manager.ts: the first job shrinks for the second, which launches after the shrink; π(400000) = 33860, π(200000) = 17984', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../../../examples/malleable-manager.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '400000'], { timeout: 110_000, env: childEnv({ TIDEPOOL_LOG: 'error' }) });
  const out = JSON.parse(stdout) as { primes: number[]; events: string[] };
  assert.deepEqual(out.primes, [33860, 17984]);
  assert.deepEqual(out.events.slice(0, 4), ['launch first 4', 'shrink-sent first 2', 'shrink-acked first 2', 'launch second 2']);
});
