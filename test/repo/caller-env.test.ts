/**
 * The suite does not depend on the caller's environment: with tidepool settings in the shell
 * (TIDEPOOL_SECRET, TIDEPOOL_ZK, TIDEPOOL_CONFIG naming a config file that would change every
 * command, TIDEPOOL_LOG_FORMAT, TIDEPOOL_LOG and one no release has), test files that run the CLI
 * in this process (manager-cli) and as processes (workflow-cli) still pass through the test runner;
 * and the environment tests give the processes they start holds none of those settings. Without the
 * runner's and the tests' cleaning both test files fail with these variables set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../support/child-env.js';
import { runCommand } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What a user's shell might hold: each would change a command's behaviour if it reached it. */
function callerSettings(): Record<string, string> {
  const config = join(mkdtempSync(join(tmpdir(), 'tidepool-caller-env-')), 'tidepool.yml');
  writeFileSync(config, 'zk: zk://127.0.0.1:1\nnodes: 4\nprune: false\nworkers: 1\n');
  return {
    TIDEPOOL_SECRET: 'a-secret-from-the-callers-shell',
    TIDEPOOL_ZK: 'zk://127.0.0.1:1',
    TIDEPOOL_CONFIG: config,
    TIDEPOOL_LOG_FORMAT: 'json',
    TIDEPOOL_LOG: 'debug',
    TIDEPOOL_SOMETHING_NEW: '1',
  };
}

describe('the caller\'s TIDEPOOL_* environment', () => {
  it('does not reach the processes tests start', () => {
    const settings = callerSettings();
    const saved = { ...process.env };
    try {
      Object.assign(process.env, settings);
      const env = childEnv({ TIDEPOOL_LOG: 'warn' });
      assert.deepEqual(Object.keys(env).filter((k) => k.startsWith('TIDEPOOL_')), ['TIDEPOOL_LOG']);
      assert.equal(env.TIDEPOOL_LOG, 'warn', 'a test\'s own setting wins');
      assert.equal(env.PATH, process.env.PATH, 'everything else is passed on');
    } finally {
      for (const key of Object.keys(settings)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it('does not change what the suite finds: CLI tests pass through the runner with it set', { timeout: 300_000 }, async () => {
    const files = ['test/frameworks/malleable/manager/manager-cli.test.ts', 'test/frameworks/workflow/workflow-cli.test.ts'];
    // The caller's settings go in on purpose (runCommand would leave them out by default), and node's
    // mark of a test's child process goes out, so that the runner reports as from a shell.
    const env = { ...childEnv(), ...callerSettings(), NODE_TEST_CONTEXT: undefined };
    const run = await runCommand(process.execPath, ['scripts/run-tests.mjs', '--no-zookeeper', ...files], { cwd: ROOT, env, timeoutMs: 280_000 });
    assert.equal(run.code, 0, `the runner with the caller's settings set:\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`);
    assert.match(run.stdout, /^# fail 0$/m);
    assert.match(run.stdout, /^# pass [1-9]/m);
  });
});
