/**
 * The node channel's credentials: the CA derived from the secret (the same on every holder, checked by
 * OpenSSL's strict verifier), node certificates naming their node ids, the operator's PKI (made with
 * openssl here) with its mistakes named, and a rotation that loses and reorders nothing in flight.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { channelCredentials, nodeIdOfCertificate } from '../../src/transport/channel-credentials.js';
import { clusterAuthority, issueNodeCertificate, nodeIdOf } from '../../src/transport/cluster-ca.js';
import { integer, oid } from '../../src/transport/der.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { Message } from '../../src/transport/types.js';
import { waitFor } from '../support/wait.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-channel-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** An operator CA and a certificate it issues with the given subjectAltName (openssl, as an operator would). */
function operatorCertificate(name: string, subjectAltName: string): { cert: string; key: string; ca: string } {
  if (!existsSync(path.join(dir, 'ca.pem'))) {
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=operator CA',
      '-keyout', 'ca-key.pem', '-out', 'ca.pem');
  }
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}-key.pem`, '-out', `${name}.csr`);
  writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=${subjectAltName}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`);
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  return { cert: read(`${name}.pem`), key: read(`${name}-key.pem`), ca: read('ca.pem') };
}

describe('node channel credentials', { timeout: 120_000 }, () => {
  it('DER: integers and object identifiers encode as X.690 says', () => {
    assert.equal(integer(0).toString('hex'), '020100');
    assert.equal(integer(127).toString('hex'), '02017f');
    assert.equal(integer(128).toString('hex'), '02020080');
    assert.equal(integer(256).toString('hex'), '02020100');
    assert.equal(integer(Buffer.from([0, 0, 0x85])).toString('hex'), '02020085');
    assert.equal(oid('2.5.4.3').toString('hex'), '0603550403');
    assert.equal(oid('1.2.840.113549').toString('hex'), '06062a864886f70d');
  });

  it('derives the same CA from the same secret, another from another; node certificates verify under OpenSSL strict rules', () => {
    const secret = randomBytes(32);
    const ca = clusterAuthority(secret);
    assert.equal(clusterAuthority(Buffer.from(secret)).certificate, ca.certificate);
    assert.notEqual(clusterAuthority(randomBytes(32)).fingerprint256, ca.fingerprint256);
    const caCert = new X509Certificate(ca.certificate);
    assert.ok(caCert.ca && caCert.verify(caCert.publicKey), 'a self-signed CA certificate');
    for (const id of ['node-1', 'a/b c:d é', 'client-0a1b', "x!'()*%"]) {
      const node = issueNodeCertificate(ca, id);
      const cert = new X509Certificate(node.certificate);
      assert.ok(!cert.ca && cert.checkIssued(caCert) && cert.verify(caCert.publicKey), id);
      assert.deepEqual(nodeIdOf(cert), { nodeId: id });
      writeFileSync(path.join(dir, 'derived-ca.pem'), ca.certificate);
      writeFileSync(path.join(dir, 'node.pem'), node.certificate);
      for (const purpose of ['sslclient', 'sslserver']) {
        assert.match(openssl('verify', '-x509_strict', '-purpose', purpose, '-CAfile', 'derived-ca.pem', 'node.pem'), /node\.pem: OK/);
      }
    }
  });

  it("takes the operator's PKI: certificates naming the node talk; mistakes are named", async () => {
    const a = operatorCertificate('pki-a', 'URI:urn:tidepool:node:pki-a,DNS:a.example');
    const b = operatorCertificate('pki-b', 'URI:urn:tidepool:node:pki-b');
    assert.equal(nodeIdOfCertificate(a.cert), 'pki-a');
    const ta = new TcpTransport({ nodeId: 'pki-a', tls: a });
    const tb = new TcpTransport({ nodeId: 'pki-b', tls: b, secret: 'ignored when tls is given' });
    await Promise.all([ta.start(), tb.start()]);
    const got: Array<[string, Message]> = [];
    tb.onMessage((from, m) => got.push([from, m]));
    await ta.send({ nodeId: 'pki-b', address: tb.address }, { type: 'hello' });
    await waitFor(() => got.length === 1, 'the message over the operator PKI');
    assert.deepEqual(got[0], ['pki-a', { type: 'hello' }]);
    // A node of the secret's CA is not one of the operator's.
    const outsider = new TcpTransport({ nodeId: 'outsider', secret: randomBytes(32) });
    await outsider.start();
    await assert.rejects(outsider.send({ nodeId: 'pki-b', address: tb.address }, { type: 'x' }), /the peer's certificate is refused/);
    await Promise.all([ta.close(), tb.close(), outsider.close()]);

    assert.throws(() => channelCredentials('pki-c', a), /the node certificate \(--tls-cert\) names node "pki-a", not this node \("pki-c"\)/);
    const unnamed = operatorCertificate('unnamed', 'DNS:unnamed.example');
    assert.throws(() => channelCredentials('unnamed', unnamed), /names no node \(no subjectAltName URI urn:tidepool:node:<id>\)/);
    assert.throws(() => channelCredentials('pki-a', { ...a, ca: 'not PEM' }), /the CA certificates \(--tls-ca\): no PEM certificate/);
    assert.throws(() => channelCredentials('pki-a', { ...a, key: b.key }), /certificate, key or CA certificates are unusable/);
  });

  it('a rotation loses and reorders nothing sent meanwhile', { timeout: 60_000 }, async () => {
    const [s1, s2] = [randomBytes(32), randomBytes(32)];
    const a = new TcpTransport({ nodeId: 'a', secret: s1 });
    const b = new TcpTransport({ nodeId: 'b', secret: s1 });
    await Promise.all([a.start(), b.start()]);
    const seqs: number[] = [];
    b.onMessage((_from, m) => seqs.push(m.seq as number));
    let seq = 0;
    const burst = async () => {
      const sends: Array<Promise<void>> = [];
      for (let i = 0; i < 500; i++) sends.push(a.send({ nodeId: 'b', address: b.address }, { type: 'n', seq: seq++ }));
      await Promise.all(sends);
    };
    await burst();
    for (const secrets of [[s1, s2], [s2, s1], [s2]]) {
      const inFlight = burst(); // queued on the connection being retired
      a.setCredentials({ secrets });
      b.setCredentials({ secrets });
      await inFlight;
      await burst(); // on the next connection
    }
    await waitFor(() => seqs.length === seq, `all ${seq} messages`);
    assert.deepEqual(seqs, Array.from({ length: seq }, (_, i) => i));
    assert.throws(() => a.setCredentials({ secrets: [] }), /needs at least one cluster secret/);
    await Promise.all([a.close(), b.close()]);
  });
});
