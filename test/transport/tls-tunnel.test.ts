/**
 * The local TLS tunnel (tls-tunnel.ts) against TLS servers of the test's own, on real sockets: bytes
 * arrive exactly, both ways and with back-pressure; a target that refuses, or does not finish its TLS
 * handshake in time, is reported with the reason and the next one takes the connection; a connection no
 * target takes is closed; connections beyond the limit are refused; either side closing closes the other;
 * the client certificate is presented to a server that requires one.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { after, describe, it } from 'node:test';
import { TlsTunnel, type TlsTunnelOptions } from '../../src/transport/tls-tunnel.js';
import { selfSignedCert } from '../frameworks/service/tls.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { freePorts } from '../support/zk-ensemble.js';

const server = selfSignedCert();
const clientCert = selfSignedCert();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function listening(s: net.Server): Promise<number> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  // At the end its connections go too (a half-open one whose handshake failed would wait for an end() nobody sends).
  const open = new Set<net.Socket>();
  s.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  closers.push(() => new Promise((resolve) => {
    s.close(() => resolve());
    for (const socket of open) socket.destroy();
  }));
  return (s.address() as net.AddressInfo).port;
}

/** A TLS server that answers every connection with the SHA-256 of all it received, then `tail` bytes, then ends. */
async function hashingServer(tail: Buffer, options: tls.TlsOptions = {}): Promise<{ port: number; peers: string[] }> {
  const peers: string[] = [];
  const s = tls.createServer({ ...server, allowHalfOpen: true, ...options }, (socket) => {
    peers.push(String(socket.getPeerCertificate()?.subject?.CN ?? ''));
    const hash = createHash('sha256');
    socket.on('data', (d: Buffer) => hash.update(d));
    socket.on('end', () => socket.end(Buffer.concat([Buffer.from(hash.digest('hex')), tail])));
  });
  return { port: await listening(s), peers };
}

async function tunnel(options: Partial<TlsTunnelOptions> & Pick<TlsTunnelOptions, 'targets'>): Promise<TlsTunnel> {
  const t = new TlsTunnel({ ca: server.cert, ...options });
  await t.start();
  closers.push(() => t.close());
  return t;
}

/** Sends `bytes` through the tunnel, half-closes, and collects the answer until the connection ends (or is reset). */
function exchange(port: number, bytes: Buffer): Promise<Buffer> {
  return withDeadline(new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => socket.end(bytes));
    const got: Buffer[] = [];
    socket.on('data', (d: Buffer) => got.push(d));
    socket.on('close', () => resolve(Buffer.concat(got)));
    socket.on('error', () => undefined); // a refused connection may be reset: what arrived is the answer
  }), 'the exchange through the tunnel', 60_000);
}

describe('TLS tunnel', { timeout: 120_000 }, () => {
  it('carries bytes exactly both ways, many megabytes each, and reports the connection', async () => {
    const tail = randomBytes(6 * 1024 * 1024);
    const target = await hashingServer(tail);
    const t = await tunnel({ targets: [{ host: '127.0.0.1', port: target.port }] });
    const forwarded: string[] = [];
    t.events.on('forwarded', (e) => forwarded.push(`${e.target} ${e.protocol}`));
    const sent = randomBytes(8 * 1024 * 1024 + 3);
    const answer = await exchange(t.port, sent);
    assert.equal(answer.subarray(0, 64).toString(), createHash('sha256').update(sent).digest('hex'), 'the server got every byte, in order');
    assert.ok(answer.subarray(64).equals(tail), 'the client got every byte, in order');
    assert.deepStrictEqual(forwarded, [`127.0.0.1:${target.port} TLSv1.3`]);
    await waitFor(() => t.connections === 0, 'the tunnel to let go of the closed connection', 10_000);
  });

  it('moves on from a target that refuses or does not finish its TLS handshake in time, naming why', async () => {
    const refusingPort = (await freePorts(1))[0]!; // bound and released: nothing listens there
    const silent = net.createServer((socket) => socket.resume()); // accepts and reads, never speaks TLS
    const silentPort = await listening(silent);
    const target = await hashingServer(Buffer.from('!'));
    const t = await tunnel({ targets: [{ host: '127.0.0.1', port: refusingPort }, { host: '127.0.0.1', port: silentPort }, { host: '127.0.0.1', port: target.port }], connectTimeoutMs: 500 });
    const failures: string[] = [];
    t.events.on('targetFailed', (e) => failures.push(`${e.target}: ${e.reason}`));
    const answer = await exchange(t.port, Buffer.from('hello'));
    assert.equal(answer.toString(), `${createHash('sha256').update('hello').digest('hex')}!`);
    assert.equal(failures.length, 2, failures.join('; '));
    assert.match(failures[0]!, new RegExp(`^127\\.0\\.0\\.1:${refusingPort}: .*ECONNREFUSED`));
    assert.equal(failures[1], `127.0.0.1:${silentPort}: no TLS connection within 500 ms`);
  });

  it('closes a connection that no target takes, saying why', async () => {
    const target = await hashingServer(Buffer.alloc(0));
    const t = await tunnel({ targets: [{ host: '127.0.0.1', port: target.port }], ca: clientCert.cert });
    const refused: string[] = [];
    t.events.on('refused', (e) => refused.push(e.reason));
    assert.equal((await exchange(t.port, Buffer.from('hello'))).length, 0, 'nothing came back');
    assert.equal(refused.length, 1);
    assert.match(refused[0]!, new RegExp(`no target could be reached: 127\\.0\\.0\\.1:${target.port}: self[- ]signed certificate`));
  });

  it('refuses connections beyond its limit', async () => {
    const target = await hashingServer(Buffer.alloc(0));
    const t = await tunnel({ targets: [{ host: '127.0.0.1', port: target.port }], maxConnections: 1 });
    const refused: string[] = [];
    t.events.on('refused', (e) => refused.push(e.reason));
    const first = net.connect({ host: '127.0.0.1', port: t.port });
    await withDeadline(new Promise<void>((resolve) => t.events.on('forwarded', () => resolve())), 'the first connection forwarded', 30_000);
    assert.equal((await exchange(t.port, Buffer.from('second'))).length, 0, 'the second connection got nothing');
    assert.deepStrictEqual(refused, ['1 connections already (the most at once)']);
    first.destroy();
  });

  it('presents its client certificate to a server that requires one', async () => {
    const target = await hashingServer(Buffer.alloc(0), { requestCert: true, rejectUnauthorized: true, ca: clientCert.cert });
    const without = await tunnel({ targets: [{ host: '127.0.0.1', port: target.port }] });
    assert.doesNotMatch((await exchange(without.port, Buffer.from('x'))).toString(), /^[0-9a-f]{64}$/, 'no answer without a client certificate');
    const withCert = await tunnel({ targets: [{ host: '127.0.0.1', port: target.port }], cert: clientCert.cert, key: clientCert.key });
    assert.equal((await exchange(withCert.port, Buffer.from('x'))).toString(), createHash('sha256').update('x').digest('hex'));
    assert.deepStrictEqual(target.peers, ['127.0.0.1'], 'the server admitted the tunnel\'s certificate');
  });

  it('refuses bad settings: no target, a listening address off loopback, a certificate without its key or with another\'s, CAs that are no certificates', () => {
    assert.throws(() => new TlsTunnel({ targets: [] }), /at least one target/);
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: 1 }], host: '10.0.0.1' }), /loopback only/);
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: 1 }], cert: clientCert.cert }), /needs its key/);
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: 1 }], ca: clientCert.key }), /hold no PEM certificate/);
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: 1 }], ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }), /does not parse/);
    assert.throws(() => new TlsTunnel({ targets: [{ host: '127.0.0.1', port: 1 }], cert: clientCert.cert, key: server.key }), /certificates are unusable/);
  });
});
