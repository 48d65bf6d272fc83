// `tidepool serve` as a user runs it (the built CLI): help, clean refusals of bad setups, and a
// real service process over HTTPS that a Distribution client uses, stopped with SIGTERM. (`serve --zk`
// is tested in service-zookeeper.test.ts, on that file's ZooKeeper ensemble and node processes.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Distribution } from '../../../src/frameworks/service/index.js';
import { factorizeAll } from '../../../examples/service/programs.js';
import { childEnv } from '../../support/child-env.js';
import { assertCleanError, runCommand, tidepool } from '../../support/cli.js';
import { selfSignedCert } from './tls.js';
import { BIN, serveFiles, startServe } from './serve-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('serve --help lists the flags', async () => {
  const run = await tidepool(['serve', '--help']);
  assert.equal(run.code, 0);
  for (const flag of ['--zk', '--port', '--tls-cert', '--tls-key', '--token-file', '--tenants', '--insecure', '--package', '--json']) assert.match(run.stdout, new RegExp(flag));
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
    writeFileSync(path.join(dir, 'tenants.yaml'), 'tenants:\n  - name: a\n    token: short\n');
    assertCleanError(await tidepool(['serve', '--insecure', '--tenants', path.join(dir, 'tenants.yaml')]), /--tenants: tenant a: its token needs at least 16 characters/);
    assertCleanError(await tidepool(['serve', '--insecure', '--tenants', path.join(dir, 'tenants.yaml'), '--token-file', token]), /--tenants and --token-file exclude each other/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a served cluster runs a client batch over HTTPS and stops on SIGTERM', async () => {
  const tls = selfSignedCert();
  const token = 'serve-cli-token-0123456789';
  const { dir, args } = serveFiles(tls, token);
  const served = startServe(['--port', '0', '--json', '--nodes', '1', '--workers', '2', ...args]);
  try {
    const ready = await served.ready;
    assert.match(ready.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const dist = await Distribution.connect(ready.url, { token, ca: tls.cert });
    assert.deepEqual(await factorizeAll(dist, [91, 1_000_003 * 3, 65_537]), [7, 3, 65_537]);
    await dist.close();
    assert.equal(await served.stop(), 0);
  } finally {
    await served.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the TLS recipe of docs/service.md runs as written: its certificate names what serve prints, the client connects; a certificate without them fails in one line', async () => {
  // The recipe: the first sh block under "Running a service".
  const doc = readFileSync(path.join(ROOT, 'docs/service.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Running a service'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  const commands = lines.filter((l) => !l.startsWith('#'));
  const printed = JSON.parse(lines.find((l) => l.startsWith('# {'))!.slice(2)) as { url: string; cluster: string };
  const [openssl, tokenLine, serveLine, clientLine] = commands;
  assert.match(openssl!, /^openssl req .*subjectAltName=/);
  assert.match(serveLine!, /^tidepool serve .* --json &$/);
  assert.match(clientLine!, /^npx tsx examples\/service\/factorization\.ts --url https:\/\/127\.0\.0\.1:7480 /);
  // A directory like the repository's root for the recipe's files: `tidepool` on PATH, the examples and packages linked.
  const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-recipe-'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'tidepool'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
  for (const name of ['examples', 'node_modules', 'src', 'package.json', 'tsconfig.json']) symlinkSync(path.join(ROOT, name), path.join(dir, name));
  const env = childEnv({ PATH: `${bin}:${process.env.PATH}`, TIDEPOOL_LOG: 'warn' });
  const sh = (command: string) => runCommand('sh', ['-c', command], { cwd: dir, timeoutMs: 120_000 }).then((r) => {
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    return r;
  });
  try {
    await sh(`PATH=${JSON.stringify(env.PATH)}; ${openssl}`);
    await sh(tokenLine!);
    // As written, but on a free port (another test may hold 7480): the only change.
    const served = startServe({ shell: `${serveLine!.replace(/ &$/, '')} --port 0` }, { cwd: dir, env });
    try {
      const ready = await served.ready;
      const url = new URL(ready.url);
      assert.equal(`${url.protocol}//${url.hostname}`, new URL(printed.url).origin.replace(/:\d+$/, ''), 'serve printed the URL the docs show (but for the port)');
      assert.equal(ready.cluster, printed.cluster);
      const cert = new X509Certificate(readFileSync(path.join(dir, 'cert.pem')));
      assert.equal(cert.checkIP(url.hostname), url.hostname, `the certificate (${cert.subjectAltName}) names the host serve printed`);
      const run = await runCommand('sh', ['-c', `PATH=${JSON.stringify(env.PATH)}; ${clientLine!.replace('https://127.0.0.1:7480', ready.url)}`], { cwd: dir, timeoutMs: 120_000 });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual((JSON.parse(run.stdout) as { outputs: number[] }).outputs, [7, 89, 1009]);
    } finally {
      assert.equal(await served.stop(), 0);
    }
    // The old recipe: a certificate without subjectAltName. serve says so; the client fails in one line naming the URL and the names.
    await sh('openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=localhost -keyout old-key.pem -out old-cert.pem');
    const old = startServe({ shell: 'tidepool serve --tls-cert old-cert.pem --tls-key old-key.pem --token-file token --nodes 1 --json --port 0' }, { cwd: dir, env });
    try {
      const ready = await old.ready;
      const port = new URL(ready.url).port;
      assert.equal(ready.url, `https://localhost:${port}`, 'serve printed the name the certificate holds');
      const at = `https://127.0.0.1:${port}`;
      const run = await runCommand('sh', ['-c', `PATH=${JSON.stringify(env.PATH)}; npx tsx examples/service/factorization.ts --url ${at} --token-file token --ca old-cert.pem`], { cwd: dir, timeoutMs: 120_000 });
      assert.equal(run.code, 1);
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line: ${run.stderr}`);
      assert.match(lines[0]!, new RegExp(`^${at.replace(/\./g, '\\.')}: TLS ERR_TLS_CERT_ALTNAME_INVALID .*its certificate names CN:localhost: connect with a name the certificate holds, or make a certificate whose subjectAltName names 127\\.0\\.0\\.1`));
      const untrusted = await runCommand('sh', ['-c', `PATH=${JSON.stringify(env.PATH)}; npx tsx examples/service/factorization.ts --url ${ready.url} --token-file token`], { cwd: dir, timeoutMs: 120_000 });
      assert.equal(untrusted.code, 1);
      assert.match(untrusted.stderr.trim(), /^https:\/\/localhost:\d+: TLS DEPTH_ZERO_SELF_SIGNED_CERT .*its certificate names CN:localhost: trust it: pass the service's certificate \(or its CA\) as `ca`/);
    } finally {
      await old.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
