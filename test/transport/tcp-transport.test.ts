import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { describe, it } from 'node:test';
import { encodeFrame } from '../../src/transport/frame-codec.js';
import type { TcpTransportOptions } from '../../src/transport/tcp-transport.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { Message, PeerAddress } from '../../src/transport/types.js';
import { TransportError } from '../../src/transport/types.js';
import { admittedClient } from '../support/channel-client.js';
import { withWarnings } from '../support/log-capture.js';
import { waitFor, withDeadline } from '../support/wait.js';

const SECRET = 'tcp-transport-test-secret';

async function started(nodeId: string, options: Partial<TcpTransportOptions> = {}): Promise<TcpTransport> {
  const t = new TcpTransport({ nodeId, secret: SECRET, ...options });
  await t.start();
  return t;
}

function peer(t: TcpTransport): PeerAddress {
  return { nodeId: t.nodeId, address: t.address };
}

/** Collects what a transport receives. */
function inbox(t: TcpTransport): Array<{ from: string; message: Message }> {
  const got: Array<{ from: string; message: Message }> = [];
  t.onMessage((from, message) => got.push({ from, message }));
  return got;
}

/** Sends one message and waits until it has arrived: proof that `to` is serving `from`. */
async function roundTrip(from: TcpTransport, to: TcpTransport, received: Array<{ message: Message }>, tag: string): Promise<void> {
  await from.send(peer(to), { type: 'probe', tag });
  await waitFor(() => received.some((r) => r.message.tag === tag), `probe ${tag}`);
}

/** A raw TCP client (no TLS): connects, writes `bytes`, resolves once connected; `closed` on 'close'. */
async function rawClient(port: number, bytes: Buffer | undefined): Promise<{ closed: Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined); // a reset is one way of being disconnected
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await withDeadline(
    new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    }),
    'the connection',
    5_000,
  );
  if (bytes) socket.write(bytes);
  return { closed };
}

function lengthPrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/** A port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('tcp transport', { timeout: 120_000 }, () => {
  it('exchanges 10,000 messages each way in order, with the sender its certificate names as `from`', { timeout: 60_000 }, async () => {
    const a = await started('node-a');
    const b = await started('node-b');
    assert.match(a.address, /^tcp:\/\/127\.0\.0\.1:\d+$/);
    const atA = inbox(a);
    const atB = inbox(b);
    const N = 10_000;
    const sends: Array<Promise<void>> = [];
    for (let i = 0; i < N; i++) {
      sends.push(a.send(peer(b), { type: 'a2b', seq: i, body: `from a ${i}` }));
      sends.push(b.send(peer(a), { type: 'b2a', seq: i, m: new Map([['i', BigInt(i)]]) }));
    }
    await withDeadline(Promise.all(sends), 'all sends', 30_000);
    await waitFor(() => atA.length === N && atB.length === N, 'all messages', 30_000);
    assert.ok(atB.every((r, i) => r.from === 'node-a' && r.message.type === 'a2b' && r.message.seq === i && r.message.body === `from a ${i}`));
    assert.ok(atA.every((r, i) => r.from === 'node-b' && r.message.seq === i && (r.message.m as Map<string, bigint>).get('i') === BigInt(i)));
    await Promise.all([a.close(), b.close()]);
    await assert.rejects(a.send(peer(b), { type: 'late' }), (err: unknown) => err instanceof TransportError && /closed/.test(err.message));
  });

  it('carries a 20 MiB message intact', { timeout: 60_000 }, async () => {
    const a = await started('big-a');
    const b = await started('big-b');
    const atB = inbox(b);
    const blob = Buffer.alloc(20 * 1024 * 1024);
    for (let i = 0; i < blob.length; i += 4) blob.writeUInt32LE((i * 2654435761) >>> 0, i);
    await a.send(peer(b), { type: 'blob', blob });
    await a.send(peer(b), { type: 'after' });
    await waitFor(() => atB.length === 2, 'the blob and the message after it', 30_000);
    assert.equal(atB[0]!.message.type, 'blob');
    assert.ok((atB[0]!.message.blob as Buffer).equals(blob));
    assert.equal(atB[1]!.message.type, 'after');
    // Larger than the limit: refused at the sender.
    const small = await started('small', { maxFrameBytes: 1024 });
    await assert.rejects(small.send(peer(b), { type: 'x', data: Buffer.alloc(2048) }), /exceeds the limit of 1024/);
    await Promise.all([a.close(), b.close(), small.close()]);
  });

  it('keeps frames of every size in order when they are sent in one turn (large ones are written apart from the batch)', { timeout: 60_000 }, async () => {
    const a = await started('mix-a');
    const b = await started('mix-b');
    const atB = inbox(b);
    // Sizes around the separate-write threshold (64 KiB) and far beyond the socket's buffer.
    const sizes = [10, 70_000, 5, 65_536, 3 * 1024 * 1024, 1, 65_535, 200_000, 0, 1024 * 1024];
    const body = (i: number, n: number) => Buffer.alloc(n, i + 1);
    const sends: Array<Promise<void>> = [];
    for (let round = 0; round < 3; round++) sizes.forEach((n, i) => sends.push(a.send(peer(b), { type: 'mix', round, i, body: body(i, n) })));
    await withDeadline(Promise.all(sends), 'all sends', 30_000);
    await waitFor(() => atB.length === 3 * sizes.length, 'every frame', 30_000);
    atB.forEach((r, k) => {
      const i = k % sizes.length;
      assert.equal(r.message.round, Math.floor(k / sizes.length), `frame ${k} in order`);
      assert.equal(r.message.i, i, `frame ${k} in order`);
      assert.ok((r.message.body as Buffer).equals(body(i, sizes[i]!)), `frame ${k} intact`);
    });
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses a peer with the wrong secret (logged, dropped, told why) and keeps serving good peers', { timeout: 30_000 }, async () => {
    await withWarnings('transport', async (warnings) => {
      const server = await started('server');
      const good = await started('good');
      const intruder = await started('intruder', { secret: 'not the secret' });
      // Trusts the server (it holds SECRET too) but presents a certificate of another secret: the server judges it.
      const presentsOther = await started('presents-other', { secret: ['not the secret', SECRET] });
      const atServer = inbox(server);
      const rejected: Array<{ remote: string; reason: string }> = [];
      server.events.on('rejected', (r) => rejected.push(r));
      await roundTrip(good, server, atServer, 'before');

      // The intruder does not trust the server's certificate either: its send fails on its own check.
      await assert.rejects(
        withDeadline(intruder.send(peer(server), { type: 'evil' }), 'the intruder send to fail', 10_000),
        (err: unknown) => err instanceof TransportError && /the peer's certificate is refused: certificate from O=tidepool, CN=tidepool cluster [0-9a-f]{12} refused/.test(err.message),
      );
      const before = rejected.length;
      await assert.rejects(
        withDeadline(presentsOther.send(peer(server), { type: 'evil' }), 'the send with an untrusted certificate to fail', 10_000),
        (err: unknown) => err instanceof TransportError && /refused by peer: certificate from .*tidepool cluster [0-9a-f]{12} refused: .*another cluster secret/.test(err.message),
      );
      await waitFor(() => rejected.length > before, 'the rejection');
      assert.match(rejected.at(-1)!.reason, /certificate from .* refused/);
      assert.ok(
        warnings.some((w) => /WARN.*server: dropping connection from 127\.0\.0\.1:\d+: certificate from .*tidepool cluster [0-9a-f]{12} refused/.test(w)),
        `a warning names the remote address and the reason: ${warnings.join('')}`,
      );
      // The other way round: the good node cannot talk to a node with another secret either.
      await assert.rejects(good.send(peer(intruder), { type: 'hello' }), /the peer's certificate is refused/);
      // And a node that is not who the sender asked for is refused by the sender.
      await assert.rejects(good.send({ nodeId: 'someone-else', address: server.address }, { type: 'x' }), /connected to node "server", expected "someone-else"/);

      await roundTrip(good, server, atServer, 'after');
      assert.ok(atServer.every((r) => r.from === 'good'));
      await Promise.all([server.close(), good.close(), intruder.close(), presentsOther.close()]);
    });
  });

  it('drops plaintext clients, clients without a certificate, and admitted peers that send garbage or oversized frames', { timeout: 60_000 }, async () => {
    await withWarnings('transport', async (warnings) => {
      const server = await started('server', { handshakeTimeoutMs: 500, maxFrameBytes: 4096 });
      const good = await started('good');
      const atServer = inbox(server);
      const rejected: string[] = [];
      server.events.on('rejected', (r) => rejected.push(r.reason));
      type Case = [string, () => Promise<{ closed: Promise<void> }>, RegExp];
      const admitted = (bytes: Buffer) => async () => {
        const client = await admittedClient(server.port, 'hostile', { secrets: [SECRET] });
        client.socket.write(bytes);
        return client;
      };
      const cases: Case[] = [
        ['plaintext frame', () => rawClient(server.port, encodeFrame({ type: 'task', id: 1 })), /TLS handshake failed/],
        ['text', () => rawClient(server.port, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), /TLS handshake failed/],
        ['nothing (handshake timeout)', () => rawClient(server.port, undefined), /no TLS handshake within 500 ms/],
        ['TLS without a client certificate', async () => {
          const socket = tls.connect({ host: '127.0.0.1', port: server.port, rejectUnauthorized: false });
          socket.on('error', () => undefined);
          socket.resume(); // reads (and drops) the refusal, so that the close is seen
          return { closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
        }, /the peer presented no certificate/],
        ['undecodable payload', admitted(Buffer.concat([lengthPrefix(2), Buffer.from([0x92, 0x01])])), /malformed frame/],
        // 1 GiB announced: dropped at the prefix, before any body is sent.
        ['oversized length prefix', admitted(lengthPrefix(1 << 30)), /frame of 1073741824 bytes exceeds the limit of 4096/],
        ['not a message', admitted(Buffer.concat([lengthPrefix(1), Buffer.from([0x2a])])), /not a message object/],
      ];
      for (const [what, connect, reason] of cases) {
        const before = rejected.length;
        const client = await connect();
        await withDeadline(client.closed, `${what}: the server to disconnect the client`, 10_000);
        await waitFor(() => rejected.length > before, `${what}: the rejection`);
        assert.match(rejected.at(-1)!, reason, what);
        await roundTrip(good, server, atServer, what);
      }
      assert.equal(warnings.filter((w) => /server: dropping connection from (hostile \()?127\.0\.0\.1:/.test(w)).length, cases.length, warnings.join(''));
      assert.ok(atServer.every((r) => r.from === 'good'), 'nothing of the dropped peers was delivered');
      await Promise.all([server.close(), good.close()]);
    });
  });

  it('rejects sends to a closed port and to a peer that never authenticates, within the timeout', { timeout: 30_000 }, async () => {
    const a = await started('a', { connectTimeoutMs: 1_000 });
    const port = await closedPort();
    await assert.rejects(
      withDeadline(a.send({ nodeId: 'nobody', address: `tcp://127.0.0.1:${port}` }, { type: 'x' }), 'the refused send', 5_000),
      (err: unknown) => err instanceof TransportError && err.peer === 'nobody' && /ECONNREFUSED/.test(err.message),
    );
    // A listener that accepts and says nothing: the send fails when connectTimeoutMs passes.
    const mute: net.Socket[] = [];
    const silent = net.createServer((socket) => mute.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    const queued = [1, 2, 3].map((n) => a.send({ nodeId: 'mute', address: `tcp://127.0.0.1:${silentPort}` }, { type: 'x', n }));
    for (const send of queued) {
      await assert.rejects(withDeadline(send, 'the timed-out send', 5_000), /not connected and admitted within 1000 ms/);
    }
    await assert.rejects(a.send({ nodeId: 'x', address: 'http://127.0.0.1:80' }, { type: 'x' }), /expected tcp:\/\/host:port/);
    for (const socket of mute) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await a.close();
  });

  it('reaches a peer again after it restarts on a new port', { timeout: 30_000 }, async () => {
    const a = await started('a');
    const b1 = await started('b');
    const first = inbox(b1);
    await roundTrip(a, b1, first, 'first life');
    const oldAddress = b1.address;
    await b1.close();
    // The old address is gone: the next send finds the connection dead and cannot reconnect.
    await waitFor(async () => {
      try {
        await a.send({ nodeId: 'b', address: oldAddress }, { type: 'probe', tag: 'into the void' });
        return false;
      } catch (err) {
        assert.ok(err instanceof TransportError);
        return true;
      }
    }, 'sends to the old address to fail');
    const b2 = await started('b');
    assert.notEqual(b2.address, oldAddress);
    const second = inbox(b2);
    await roundTrip(a, b2, second, 'second life');
    assert.ok(second.every((r) => r.from === 'a'));
    await Promise.all([a.close(), b2.close()]);
  });

  it('closes cleanly: listener and connections, idempotently', { timeout: 30_000 }, async () => {
    const a = await started('a');
    const b = await started('b');
    const atB = inbox(b);
    await roundTrip(a, b, atB, 'x');
    const port = b.port;
    await assert.rejects(new TcpTransport({ nodeId: 'clash', secret: SECRET, port }).start(), (err: unknown) => err instanceof TransportError && /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/.test(err.message));
    await assert.rejects(b.start(), /already started/);
    await Promise.all([b.close(), b.close()]);
    await assert.rejects(rawClient(port, undefined), /ECONNREFUSED/);
    await a.close();
    await assert.rejects(a.start(), /already closed/);
  });
});
