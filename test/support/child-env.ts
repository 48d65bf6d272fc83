/**
 * Test support: the environment of a process a test starts (the CLI, a node process, an example).
 * The caller's shell may hold tidepool settings (TIDEPOOL_SECRET, TIDEPOOL_ZK, TIDEPOOL_CONFIG,
 * TIDEPOOL_LOG_FORMAT, …) that would change what the process does; none of them reaches it. The one
 * kept is TIDEPOOL_LOG, which the test runner sets (scripts/run-tests.mjs strips the others from the
 * suite's own environment the same way); a test gives its own settings in `extra` (a key set to
 * undefined there is left out).
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TIDEPOOL_') || key === 'TIDEPOOL_LOG') env[key] = value;
  return { ...env, ...extra };
}
