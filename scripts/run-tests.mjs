#!/usr/bin/env node
// Runs the test suite on node's built-in runner (through tsx) so that its summary line is printed.
// ZooKeeper is installed first when missing (tests start their own ensembles on loopback),
// Chromium when a browser test is selected, and iproute2/nftables, OpenSSH and Slurm when tests on
// test hosts or of the node providers are.
//
// The suite does not depend on the caller's environment: every TIDEPOOL_* variable of the caller's
// shell (a secret, a ZooKeeper address, a config file, a log format, …) is removed before the tests
// run; the runner sets TIDEPOOL_LOG=error itself (run a file directly with `node --import tsx --test`
// to see more). TIDEPOOL_SEED is the one passed on: a test knob, not a tidepool setting, that pins
// the seed of the randomized tests to reproduce a failure (test/support/seeds.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const skipZk = args.includes('--no-zookeeper');
const only = args.filter((a) => !a.startsWith('--'));

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// A directory named on the command line stands for its test files (node's runner, given a directory,
// looks for .js test files only and would run none).
for (const p of only) {
  if (!existsSync(p)) {
    console.error(`error: no test file or directory ${p}`);
    process.exit(2);
  }
}
let files = only.length > 0 ? only.flatMap((p) => (statSync(p).isDirectory() ? find(p) : [p])) : find('test');
if (skipZk) files = files.filter((f) => !/zookeeper|zk-/.test(f));

if (!skipZk) {
  const ensure = spawnSync('bash', ['scripts/ensure-zookeeper.sh'], { stdio: 'inherit' });
  if (ensure.status !== 0) {
    console.error('error: ZooKeeper is required for the tests and could not be installed (see above)');
    process.exit(2);
  }
}

// The dashboard's browser test drives Debian's Chromium (playwright-core brings no browser).
if (files.some((f) => /browser/.test(f))) {
  const ensure = spawnSync('bash', ['scripts/ensure-chromium.sh'], { stdio: 'inherit' });
  if (ensure.status !== 0) {
    console.error('error: Chromium is required for the browser tests and could not be installed (see above)');
    process.exit(2);
  }
}

// Tests on test hosts (network namespaces: test/support/hosts.ts) need root, iproute2 and nftables;
// the ssh and slurm node providers' tests need OpenSSH, and Slurm with MUNGE.
for (const [pattern, script, what] of [
  [/test\/hosts\/|hosts\.test|providers\//, 'scripts/ensure-netns.sh', 'test hosts need root, iproute2 and nftables'],
  [/ssh/, 'scripts/ensure-sshd.sh', 'the ssh provider tests need OpenSSH'],
  [/slurm/, 'scripts/ensure-slurm.sh', 'the slurm provider tests need Slurm and MUNGE'],
]) {
  if (!files.some((f) => pattern.test(f))) continue;
  const ensure = spawnSync('bash', [script], { stdio: 'inherit' });
  if (ensure.status !== 0) {
    console.error(`error: ${what}, and they could not be installed (see above)`);
    process.exit(2);
  }
}

/** The suite's environment: the caller's without its tidepool settings, plus the runner's own. */
function suiteEnv(env) {
  const kept = Object.entries(env).filter(([key]) => !key.startsWith('TIDEPOOL_') || key === 'TIDEPOOL_SEED');
  return { ...Object.fromEntries(kept), TIDEPOOL_LOG: 'error' };
}

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', ...files],
  { stdio: 'inherit', env: suiteEnv(process.env) },
);
process.exit(result.status ?? 1);
