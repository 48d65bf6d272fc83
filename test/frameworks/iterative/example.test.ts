/** docs/iterative.md's runnable example: every strategy gives one thread's bits, and π within its error. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../support/cli.js';

test('examples/iterative-pi.ts runs every strategy with the same bits as one thread', async () => {
  const script = fileURLToPath(new URL('../../../examples/iterative-pi.ts', import.meta.url));
  const run = await runCommand(process.execPath, ['--import', 'tsx', script, '50000'], { timeoutMs: 120_000 });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { balance: string; iterations: number; pi: number; sameAsOneThread: boolean });
  assert.deepEqual(lines.map((l) => l.balance), ['ruper', 'steal', 'static']);
  for (const l of lines) {
    assert.equal(l.iterations, 50_000);
    assert.equal(l.sameAsOneThread, true);
    // 500,000 darts: the standard error of 4·p̂ is about 4·sqrt(p(1−p)/n) ≈ 0.0023.
    assert.ok(Math.abs(l.pi - Math.PI) < 0.01, `π ≈ ${l.pi}`);
  }
  assert.equal(new Set(lines.map((l) => l.pi)).size, 1, 'the same estimate whatever the strategy');
});
