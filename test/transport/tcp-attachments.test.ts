/**
 * Attachments on real TCP connections: lent bytes arrive intact, into a placer's destination when one
 * is offered; an authenticated peer that sends a malformed or truncated attachment frame is dropped
 * with a clear reason, and the transport keeps serving everyone else.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Packr } from 'msgpackr';
import { lend } from '../../src/transport/attachment.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { Message, PeerAddress } from '../../src/transport/types.js';
import { admittedClient, type ChannelClient } from '../support/channel-client.js';
import { waitFor, withDeadline } from '../support/wait.js';

const SECRET = 'tcp-attachments-test-secret';
const transports: TcpTransport[] = [];
after(() => Promise.all(transports.map((t) => t.close())));

async function started(nodeId: string): Promise<TcpTransport> {
  const t = new TcpTransport({ nodeId, secret: SECRET });
  await t.start();
  transports.push(t);
  return t;
}

const peer = (t: TcpTransport): PeerAddress => ({ nodeId: t.nodeId, address: t.address });

function inbox(t: TcpTransport): Message[] {
  const got: Message[] = [];
  t.onMessage((_from, message) => got.push(message));
  return got;
}

/** A peer that knows the secret and speaks raw bytes once admitted (a broken or hostile node). */
function authenticatedSocket(port: number, nodeId: string): Promise<ChannelClient> {
  return admittedClient(port, nodeId, { secrets: [SECRET] });
}

async function roundTrip(from: TcpTransport, to: TcpTransport, got: Message[], tag: string): Promise<void> {
  await from.send(peer(to), { type: 'probe', tag });
  await waitFor(() => got.some((m) => m.tag === tag), `probe ${tag}`, 10_000);
}

describe('attachments over TcpTransport', { timeout: 120_000 }, () => {
  it('carries lent bytes intact, in order with other messages, into the placer\'s destination', async () => {
    const a = await started('a');
    const b = await started('b');
    const got = inbox(b);
    const memory = Buffer.alloc(8 * 1024 * 1024);
    const placed: string[] = [];
    b.placeAttachments((from, header, field, frame) => {
      if (header.type !== 'part') return undefined;
      placed.push(`${from}:${field}:${frame.length}`);
      const at = (header.i as number) * 1024 * 1024;
      return memory.subarray(at, at + frame.length);
    });
    const blob = randomBytes(memory.length);
    for (let i = 0; i < 8; i++) {
      void a.send(peer(b), { type: 'part', i, data: lend(blob.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024)) });
      void a.send(peer(b), { type: 'note', i });
    }
    await a.send(peer(b), { type: 'other', data: lend(Buffer.from('not placed')) });
    await waitFor(() => got.length === 17, 'every message', 30_000);
    assert.deepStrictEqual(got.map((m) => `${m.type}${m.i ?? ''}`), [...Array.from({ length: 8 }, (_, i) => [`part${i}`, `note${i}`]).flat(), 'other']);
    assert.ok(memory.equals(blob), 'the placed bytes are the sent bytes');
    for (const m of got.filter((m) => m.type === 'part')) assert.equal((m.data as Buffer).buffer, memory.buffer);
    assert.deepStrictEqual(placed, Array.from({ length: 8 }, () => `a:data:${1024 * 1024}`), 'placed by the authenticated sender\'s id');
    assert.equal((got[16]!.data as Buffer).toString(), 'not placed');
  });

  it('drops an authenticated peer that sends a malformed attachment frame, and keeps serving others', async () => {
    const server = await started('server');
    const good = await started('good');
    const got = inbox(server);
    const rejected: string[] = [];
    server.events.on('rejected', (r) => rejected.push(r.reason));
    const packr = new Packr({ mapsAsObjects: false });
    const header = packr.pack(['data', { type: 'x', data: 1 }]);
    const frame = Buffer.alloc(9 + header.length + 4);
    frame.writeUInt32BE(5 + header.length + 4, 0);
    frame[4] = 0xc1;
    frame.writeUInt32BE(header.length, 5);
    header.copy(frame, 9);
    const { socket, closed } = await authenticatedSocket(server.port, 'hostile');
    socket.write(frame);
    await withDeadline(closed, 'the server to drop the peer', 10_000);
    await waitFor(() => rejected.length === 1, 'the rejection');
    assert.match(rejected[0]!, /malformed frame: attachment header: the message already has a field "data"/);
    assert.equal(got.length, 0, 'nothing of it was delivered');
    await roundTrip(good, server, got, 'after the bad frame');
  });

  it('delivers nothing of an attachment cut off by its connection, and keeps serving others', async () => {
    const server = await started('server2');
    const good = await started('good2');
    const got = inbox(server);
    const memory = Buffer.alloc(100_000);
    server.placeAttachments(() => memory);
    const header = new Packr({ mapsAsObjects: false }).pack(['data', { type: 'cut' }]);
    const frame = Buffer.alloc(9 + header.length);
    frame.writeUInt32BE(5 + header.length + memory.length, 0);
    frame[4] = 0xc1;
    frame.writeUInt32BE(header.length, 5);
    header.copy(frame, 9);
    const { socket, closed } = await authenticatedSocket(server.port, 'dying');
    socket.end(Buffer.concat([frame, Buffer.alloc(40_000, 7)]));
    await withDeadline(closed, 'the connection to close', 10_000);
    await roundTrip(good, server, got, 'after the cut');
    assert.deepStrictEqual(got.map((m) => m.type), ['probe'], 'the cut message was never delivered');
  });
});
