/** `tidepool node` with the operator's certificates for the node channel: partial or mismatched flags are clear errors. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterAuthority, issueNodeCertificate } from '../../src/transport/cluster-ca.js';
import { assertCleanError, tidepool } from '../support/cli.js';

describe('tidepool node --tls-*', { timeout: 120_000 }, () => {
  it('needs all three files, a readable one each, and a certificate for the node it runs as', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-node-tls-'));
    const secret = join(dir, 'secret');
    writeFileSync(secret, 'a-long-enough-cluster-secret\n');
    const ca = clusterAuthority(Buffer.from('another secret standing in for a PKI'));
    const issued = issueNodeCertificate(ca, 'node-7');
    writeFileSync(join(dir, 'cert.pem'), issued.certificate);
    writeFileSync(join(dir, 'key.pem'), issued.key);
    writeFileSync(join(dir, 'ca.pem'), ca.certificate);
    const base = ['node', '--zk', 'zk://127.0.0.1:1', '--secret-file', secret];
    assertCleanError(await tidepool([...base, '--tls-cert', join(dir, 'cert.pem')]), /--tls-cert, --tls-key and --tls-ca go together/);
    assertCleanError(await tidepool([...base, '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem'), '--tls-ca', join(dir, 'missing.pem')]),
      /--tls-ca: cannot read .*missing\.pem: ENOENT/);
    const all = ['--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem'), '--tls-ca', join(dir, 'ca.pem')];
    assertCleanError(await tidepool([...base, ...all, '--id', 'node-8']), /--id: "node-8" but the --tls-cert certificate names node "node-7"/);
    assertCleanError(await tidepool([...base, '--tls-cert', join(dir, 'ca.pem'), '--tls-key', join(dir, 'key.pem'), '--tls-ca', join(dir, 'ca.pem')]),
      /the node certificate \(--tls-cert\): the certificate names no node/);
    const help = await tidepool(['node', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--tls-cert <file>[\s\S]*urn:tidepool:node:<id>[\s\S]*SIGHUP re-reads --secret-file/);
  });
});
