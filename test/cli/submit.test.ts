/**
 * `tidepool submit` (the built CLI) on a ZooKeeper ensemble: a module path is resolved from the
 * caller's current directory (not from tidepool's own code), and a job queued while no resource
 * manager runs comes with a warning that it will wait; with a manager running, no warning.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { decode } from '../../src/util/codec.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import type { TaskPoolSpec } from '../../src/runtime/pool/task-pool-spec.js';
import { assertCleanError, runCommand } from '../support/cli.js';
import { secretFile, secretIn } from '../support/node-process.js';
import { withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const COUNT = fileURLToPath(new URL('../../examples/count.js', import.meta.url));

describe('tidepool submit', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  const dir = mkdtempSync(join(tmpdir(), 'tp-submit-'));
  copyFileSync(COUNT, join(dir, 'count.js'));
  // As in a user's project that installed tidepool: count.js imports it.
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(fileURLToPath(new URL('../../', import.meta.url)), join(dir, 'node_modules', 'tidepool-runtime'));
  const secret = secretFile();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_')));
  const submit = (args: string[], cwd = dir) => runCommand(process.execPath, [BIN, 'submit', ...args, '--zk', zk.hosts, '--secret-file', secret, '--json'], { cwd, env, timeoutMs: 60_000 });
  const moduleOf = async (job: string) => decode<JobSpec<TaskPoolSpec>>((await client.getData(jobPaths(job).spec)).data).kindSpec.ref.module;

  before(async () => {
    zk = await startEnsemble({ size: 1 });
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    await client.close();
    await zk.stop();
  });

  it('resolves ./count.js from the current directory and warns that no resource manager runs', { timeout: 120_000 }, async () => {
    const run = await submit(['./count.js', '--flexibility', 'rigid', '--root', '{"n":1000}']);
    assert.equal(run.code, 0, run.stderr);
    const { job } = JSON.parse(run.stdout) as { job: string };
    assert.equal(await moduleOf(job), pathToFileURL(join(dir, 'count.js')).href);
    assert.match(run.stderr, new RegExp(`^warning: no resource manager is running on zk://${zk.hosts.replace(/[.]/g, '\\.')}: job ${job} waits in the queue until one starts`, 'm'));
    assertCleanError(await submit(['./count.js', '--flexibility', 'rigid'], tmpdir()), new RegExp(`MODULE: no such file: ${join(tmpdir(), 'count.js').replace(/[.]/g, '\\.')}`));
  });

  it('with a manager running: no warning', { timeout: 120_000 }, async () => {
    const manager = spawn(process.execPath, [BIN, 'manager', '--zk', zk.hosts, '--secret-file', secret, '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const exited = new Promise<number | null>((resolve) => manager.once('exit', resolve));
    try {
      await withDeadline(new Promise<void>((resolve, reject) => {
        let out = '';
        manager.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('"ready":true')) resolve();
        });
        manager.once('exit', (code) => reject(new Error(`the manager exited (${code})`)));
      }), 'the manager to be ready', 60_000);
      const run = await submit(['count.js', '--flexibility', 'malleable', '--max', '2', '--root', '{"n":1000}']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      assert.equal(await moduleOf((JSON.parse(run.stdout) as { job: string }).job), pathToFileURL(join(dir, 'count.js')).href, 'a bare name of an existing file is that file');
    } finally {
      manager.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });
});
