// `tidepool serve` as a user runs it (the built CLI): help, clean refusals of bad setups, and a
// real service process over HTTPS that a Distribution client uses, stopped with SIGTERM. (`serve --zk`
// is tested in service-zookeeper.test.ts, on that file's ZooKeeper ensemble and node processes.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Distribution } from '../../../src/frameworks/service/index.js';
import { factorizeAll } from '../../../examples/service/programs.js';
import { assertCleanError, tidepool } from '../../support/cli.js';
import { selfSignedCert } from './tls.js';

const BIN = fileURLToPath(new URL('../../../bin/tidepool.mjs', import.meta.url));

test('serve --help lists the flags', async () => {
  const run = await tidepool(['serve', '--help']);
  assert.equal(run.code, 0);
  for (const flag of ['--zk', '--port', '--tls-cert', '--tls-key', '--token-file', '--insecure', '--package', '--json']) assert.match(run.stdout, new RegExp(flag));
});

test('serve refuses a missing token, missing TLS and --insecure off loopback, with exit code 2', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-serve-'));
  try {
    const token = path.join(dir, 'token');
    writeFileSync(token, 'short');
    assertCleanError(await tidepool(['serve', '--insecure']), /a token is required/);
    assertCleanError(await tidepool(['serve', '--insecure', '--token-file', token]), /needs at least 16/);
    writeFileSync(token, 'a-long-enough-token-1234');
    assertCleanError(await tidepool(['serve', '--token-file', token]), /--tls-cert and --tls-key are required/);
    assertCleanError(await tidepool(['serve', '--token-file', token, '--insecure', '--host', '0.0.0.0']), /loopback only/);
    assertCleanError(await tidepool(['serve', '--token-file', token, '--tls-cert', path.join(dir, 'none.pem'), '--tls-key', path.join(dir, 'none.pem')]), /--tls-cert: cannot read .*none\.pem: ENOENT/);
    assertCleanError(await tidepool(['serve', '--token-file', token, '--insecure', '--package', 'no-such-package-here']), /--package: package no-such-package-here: not found/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a served cluster runs a client batch over HTTPS and stops on SIGTERM', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-serve-'));
  const tls = selfSignedCert();
  const token = 'serve-cli-token-0123456789';
  writeFileSync(path.join(dir, 'cert.pem'), tls.cert);
  writeFileSync(path.join(dir, 'key.pem'), tls.key);
  writeFileSync(path.join(dir, 'token'), `${token}\n`);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--json', '--nodes', '1', '--workers', '2',
    '--tls-cert', path.join(dir, 'cert.pem'), '--tls-key', path.join(dir, 'key.pem'), '--token-file', path.join(dir, 'token')], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const ready = await new Promise<{ url: string }>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { url: string });
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    assert.match(ready.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const dist = await Distribution.connect(ready.url, { token, ca: tls.cert });
    assert.deepEqual(await factorizeAll(dist, [91, 1_000_003 * 3, 65_537]), [7, 3, 65_537]);
    await dist.close();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
