/**
 * An embedded cluster keeps its process alive while it has jobs, and only then (process-hold.ts): a
 * program that forgets cluster.close() ends by itself once its jobs are done, and a job — submitted
 * through Cluster.submit or created on the coordination service directly — is never cut short by the
 * process ending under it (Node would exit with code 13, "unsettled top-level await").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ProcessHold } from '../../src/runtime/client/process-hold.js';
import { runCommand } from '../support/cli.js';

const APP = fileURLToPath(new URL('./apps/forgotten-close.ts', import.meta.url));
/** π(200 000), the number of primes below 200 000. */
const PRIMES_BELOW_200K = 17984;

/** Runs the program to its end; a program that does not end within the deadline fails the test, named. */
async function runProgram(mode: string) {
  return runCommand(process.execPath, ['--import', 'tsx', APP, mode], { timeoutMs: 90_000 })
    .catch((err: unknown) => assert.fail(`forgotten-close.ts ${mode} did not end by itself: ${(err as Error).message}`));
}

for (const mode of ['submit', 'direct', 'closed']) {
  test(`a program whose job is done ends by itself (${mode})`, async () => {
    const run = await runProgram(mode);
    assert.equal(run.code, 0, `exit code 0 (stderr: ${run.stderr})`);
    assert.deepEqual(JSON.parse(run.stdout.trim()), { primes: PRIMES_BELOW_200K });
  });
}

test('an idle embedded cluster does not keep its process alive', async () => {
  const run = await runProgram('idle');
  assert.equal(run.code, 0, `exit code 0 (stderr: ${run.stderr})`);
});

test('ProcessHold: held while anyone holds it; a release counts once', async () => {
  const hold = new ProcessHold();
  const a = hold.acquire();
  const b = hold.acquire();
  a();
  a();
  assert.equal(hold.held, true, 'b still holds');
  b();
  assert.equal(hold.held, false);
  await assert.rejects(hold.during(async () => {
    assert.equal(hold.held, true);
    throw new Error('work failed');
  }), /work failed/);
  assert.equal(hold.held, false, 'released after failed work');
});
