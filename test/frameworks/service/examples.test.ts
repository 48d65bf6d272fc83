// The documented example (docs/service.md) runs as written and prints the sequential answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../support/cli.js';
import { factorize } from '../../../examples/service/programs.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/service/factorization.ts', import.meta.url));

test('examples/service/factorization.ts on this machine prints the factors and the loop outputs', async () => {
  const run = await runCommand(process.execPath, ['--import', 'tsx', EXAMPLE], { timeoutMs: 60_000 });
  assert.equal(run.code, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { factors: number[]; outputs: number[] };
  assert.deepEqual(out.factors, [1_000_003 * 999_983, 104_723 * 104_729, 2 ** 31 - 1, 600_851_475_143].map(factorize));
  assert.deepEqual(out.outputs, [7, 89, 1009]);
});
