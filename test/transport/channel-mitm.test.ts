/**
 * A man in the middle of the node channel: a TCP proxy the test controls sits between two nodes
 * (the receiver advertises the proxy's address). It sees every byte, yet no plaintext of the frames;
 * a byte it alters, a record it injects and a record it replays each make the receiver drop the
 * connection and log why, and the sender's next message arrives on a new connection.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { Message, PeerAddress } from '../../src/transport/types.js';
import { withWarnings } from '../support/log-capture.js';
import { startTcpProxy, type Direction } from '../support/tcp-proxy.js';
import { deferred, waitFor } from '../support/wait.js';

const SECRET = randomBytes(32);
const MARKER = `tidepool-mitm-marker-${randomBytes(8).toString('hex')}`;
const transports: TcpTransport[] = [];
after(() => Promise.all(transports.map((t) => t.close())));

/** A TLS 1.3 application-data record: type 23, legacy version 3.3, 16-bit length. */
function firstRecord(bytes: Buffer): Buffer | undefined {
  if (bytes.length < 5 || bytes[0] !== 0x17 || bytes[1] !== 0x03 || bytes[2] !== 0x03) return undefined;
  const length = 5 + bytes.readUInt16BE(3);
  return bytes.length >= length ? Buffer.from(bytes.subarray(0, length)) : undefined;
}

describe('node channel under a man in the middle', { timeout: 120_000 }, () => {
  it('shows no plaintext; altered, injected and replayed records are dropped and logged; the next message arrives', async () => {
    await withWarnings('transport', async (warnings) => {
      const receiverPort = deferred<{ host: string; port: number }>();
      const proxy = await startTcpProxy(receiverPort.promise);
      const sender = new TcpTransport({ nodeId: 'sender', secret: SECRET });
      const receiver = new TcpTransport({ nodeId: 'receiver', secret: SECRET, advertise: `tcp://${proxy.address}` });
      transports.push(sender, receiver);
      await Promise.all([sender.start(), receiver.start()]);
      receiverPort.resolve({ host: '127.0.0.1', port: receiver.port });
      const to: PeerAddress = { nodeId: 'receiver', address: receiver.address };
      assert.equal(to.address, `tcp://${proxy.address}`);

      const captured: Record<Direction, Buffer[]> = { up: [], down: [] };
      proxy.onData((direction, _n, chunk) => captured[direction].push(Buffer.from(chunk)));
      const got: Message[] = [];
      receiver.onMessage((from, m) => {
        assert.equal(from, 'sender');
        got.push(m);
      });
      const rejected: string[] = [];
      receiver.events.on('rejected', (r) => rejected.push(r.reason));
      const deliver = async (tag: string): Promise<void> => {
        await sender.send(to, { type: 'task-state', tag, state: { note: MARKER, blob: Buffer.from(MARKER) } });
        await waitFor(() => got.some((m) => m.tag === tag), `message ${tag} at the receiver`, 10_000);
      };

      // Plaintext never crosses the proxy, though the receiver gets it.
      for (let i = 0; i < 20; i++) await deliver(`plain-${i}`);
      const wire = Buffer.concat([...captured.up, ...captured.down]);
      assert.ok(captured.up.reduce((n, c) => n + c.length, 0) > 20 * MARKER.length, 'the frames crossed the proxy');
      assert.equal(wire.indexOf(MARKER), -1, 'the marker is not in the captured bytes');
      assert.equal(wire.indexOf(Buffer.from(MARKER).toString('base64')), -1);
      assert.ok(got.every((m) => (m.state as { note: string }).note === MARKER));

      // A record recorded now, to replay later.
      const recording = captured.up.length;
      await deliver('to-record');
      const recorded = firstRecord(Buffer.concat(captured.up.slice(recording)));
      assert.ok(recorded, 'the proxy recorded one whole TLS record of the sender');

      const attacks: Array<[string, (chunk: Buffer) => Buffer[]]> = [
        ['alter one byte', (chunk) => {
          const altered = Buffer.from(chunk);
          altered[altered.length - 1]! ^= 0x01;
          return [altered];
        }],
        ['inject a record', (chunk) => {
          const body = randomBytes(64);
          const header = Buffer.from([0x17, 0x03, 0x03, 0x00, body.length]);
          return [chunk, header, body];
        }],
        ['replay a recorded record', (chunk) => [chunk, recorded]],
      ];
      for (const [what, attack] of attacks) {
        const before = rejected.length;
        const delivered = got.length;
        const applied = proxy.rewriteNext('up', attack);
        await sender.send(to, { type: 'task-state', tag: `attacked: ${what}`, state: { note: MARKER } });
        await applied;
        await waitFor(() => rejected.length > before, `${what}: the receiver to drop the connection`, 10_000);
        assert.match(rejected.at(-1)!, /a TLS record failed authentication \(bytes altered, injected or replayed on the way\)/, what);
        // Nothing forged was delivered: at most the intact message before the attack's bytes.
        assert.ok(got.slice(delivered).every((m) => (m.state as { note: string }).note === MARKER), what);
        // The sender's next send finds its connection gone and opens a new one, through the same proxy.
        await waitFor(async () => {
          const tag = `after: ${what} ${got.length}`;
          await sender.send(to, { type: 'task-state', tag, state: { note: MARKER } }).catch(() => undefined);
          return waitFor(() => got.some((m) => m.tag === tag), 'it', 2_000).then(() => true, () => false);
        }, `${what}: a message after the attack to arrive`, 20_000);
      }
      const dropped = warnings.filter((w) => /WARN.*receiver: dropping connection from sender \(127\.0\.0\.1:\d+\): a TLS record failed authentication/.test(w));
      assert.equal(dropped.length, attacks.length, `one warning per attack, naming the peer and the reason:\n${warnings.join('')}`);
      assert.equal(Buffer.concat([...captured.up, ...captured.down]).indexOf(MARKER), -1, 'no plaintext after the attacks either');
      await proxy.close();
    });
  });
});
