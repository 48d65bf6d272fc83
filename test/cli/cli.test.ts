import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect } from '../../src/coord/connect.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));

interface Run { code: number | null; stdout: string; stderr: string }

function tidepool(args: string[], timeoutMs = 30_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`tidepool ${args.join(' ')} timed out`)); }, timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

function assertCleanError(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit code 2 (stderr: ${run.stderr})`);
  assert.match(run.stderr, pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
}

describe('tidepool CLI', () => {
  it('prints help with every command and exits 0', async () => {
    const run = await tidepool(['--help']);
    assert.equal(run.code, 0);
    for (const cmd of ['demo', 'coord']) assert.match(run.stdout, new RegExp(`\\b${cmd}\\b`));
    const sub = await tidepool(['coord', 'ls', '--help']);
    assert.equal(sub.code, 0);
    assert.match(sub.stdout, /--zk/);
    assert.match(sub.stdout, /--json/);
  });

  it('demo says honestly that it is not available yet, as JSON too', async () => {
    const run = await tidepool(['demo', '--json']);
    assert.equal(run.code, 0);
    assert.equal((JSON.parse(run.stdout) as { available: boolean }).available, false);
  });

  it('rejects bad flags and bad values with a clear message and exit code 2', async () => {
    assertCleanError(await tidepool(['demo', '--bogus']), /unknown option '--bogus'/);
    assertCleanError(await tidepool(['--log-level', 'loud', 'demo']), /--log-level: "loud"/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'zk://nope']), /--zk: .*"nope" is not host:port/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'http://x:1']), /--zk: bad connection string/);
    assertCleanError(await tidepool(['coord', 'ls', 'relative', '--zk', 'zk://127.0.0.1:1']), /not an absolute znode path/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'zk://127.0.0.1:1', '--depth', '0']), /--depth: "0"/);
  });

  describe('against a ZooKeeper ensemble', () => {
    let zk: ZkEnsemble;
    const root = `/cli-${randomUUID()}`;
    before(async () => {
      zk = await startEnsemble({ size: 3 });
      const client = await connect(zk.connectionString);
      await mkdirp(client, `${root}/jobs/j1/vars`);
      await client.create(`${root}/jobs/j1/vars/bound`, Buffer.from('42'));
      await client.close();
    });
    after(async () => zk.stop());

    it('coord ls prints the tree, as text and as JSON', { timeout: 60_000 }, async () => {
      const json = await tidepool(['coord', 'ls', root, '--zk', zk.connectionString, '--depth', '3', '--json']);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { path: root, tree: { jobs: { j1: { vars: null } } } });
      const text = await tidepool(['coord', 'ls', `${root}/jobs/j1`, '--zk', zk.connectionString]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^\s+vars$/m);
    });

    it('coord get prints data and version; a missing znode is a clear error', { timeout: 60_000 }, async () => {
      const run = await tidepool(['coord', 'get', `${root}/jobs/j1/vars/bound`, '--zk', zk.connectionString, '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { path: `${root}/jobs/j1/vars/bound`, data: '42', version: 0, numChildren: 0, ephemeralOwner: null });
      assertCleanError(await tidepool(['coord', 'get', `${root}/missing`, '--zk', zk.connectionString]), /no znode at/);
    });

    it('an unreachable cluster fails within the timeout with a clear message', { timeout: 60_000 }, async () => {
      const run = await tidepool(['coord', 'ls', '/', '--zk', 'zk://127.0.0.1:1', '--timeout', '1500']);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /error: CONNECTION_LOSS.*no ZooKeeper server answered within 1500 ms/);
    });
  });
});
