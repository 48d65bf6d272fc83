import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import type { Message, PeerAddress } from '../../src/transport/types.js';
import { TransportError } from '../../src/transport/types.js';
import { logEnabled, setLogLevel } from '../../src/util/log.js';
import { waitFor } from '../support/wait.js';

let networks = 0;

/** Started transports on a fresh network. */
async function nodes(...ids: string[]): Promise<{ network: InProcessNetwork; transports: InProcessTransport[] }> {
  const network = InProcessNetwork.get(`inproc-test-${process.pid}-${++networks}`);
  const transports = ids.map((id) => new InProcessTransport(id, network));
  await Promise.all(transports.map((t) => t.start()));
  return { network, transports };
}

function peer(t: InProcessTransport): PeerAddress {
  return { nodeId: t.nodeId, address: t.address };
}

describe('in-process transport', { timeout: 30_000 }, () => {
  it('names nodes inproc://<network>/<nodeId> and shares networks by name', { timeout: 5_000 }, async () => {
    const { network, transports: [a] } = await nodes('a');
    assert.equal(a!.address, `inproc://${network.name}/a`);
    assert.equal(InProcessNetwork.get(network.name), network);
    assert.equal(new InProcessTransport('x').network, InProcessNetwork.get('default'));
    assert.deepEqual(network.nodeIds(), ['a']);
    await assert.rejects(new InProcessTransport('a', network).start(), TransportError, 'node ids are unique on a network');
    await a!.close();
    assert.deepEqual(network.nodeIds(), []);
  });

  it('delivers in FIFO order per sender-receiver pair, with the sender as `from`', { timeout: 10_000 }, async () => {
    const { transports: [a, b, c] } = await nodes('a', 'b', 'c');
    const received: Array<[string, number]> = [];
    c!.onMessage((from, m) => received.push([from, m.seq as number]));
    const sends: Array<Promise<void>> = [];
    for (let i = 0; i < 1000; i++) {
      sends.push(a!.send(peer(c!), { type: 'seq', seq: i }));
      sends.push(b!.send(peer(c!), { type: 'seq', seq: i }));
    }
    await Promise.all(sends);
    await waitFor(() => received.length === 2000, 'all messages');
    for (const sender of ['a', 'b']) {
      assert.deepEqual(received.filter(([f]) => f === sender).map(([, s]) => s), Array.from({ length: 1000 }, (_, i) => i), sender);
    }
    await Promise.all([a, b, c].map((t) => t!.close()));
  });

  it('delivers asynchronously, never inside send, and passes messages by reference', { timeout: 10_000 }, async () => {
    const { transports: [a, b] } = await nodes('a', 'b');
    const received: Message[] = [];
    let sending = false;
    let reentered = false;
    b!.onMessage((_from, m) => {
      if (sending) reentered = true;
      received.push(m);
      // A handler that sends from inside delivery does not recurse either.
      if (m.type === 'ping') {
        sending = true;
        void b!.send(peer(b!), { type: 'self' });
        sending = false;
      }
    });
    const message = { type: 'ping', payload: { big: 'object' } };
    sending = true;
    const sent = a!.send(peer(b!), message);
    sending = false;
    assert.equal(received.length, 0, 'nothing is delivered synchronously');
    await sent;
    await waitFor(() => received.length === 2, 'ping and self');
    assert.equal(reentered, false);
    assert.equal(received[0], message, 'the same object (by reference)');
    assert.equal(received[1]!.type, 'self');
    await Promise.all([a!.close(), b!.close()]);
  });

  it('rejects sends to unknown or closed nodes, bad addresses, and from a closed transport', { timeout: 10_000 }, async () => {
    const { network, transports: [a, b] } = await nodes('a', 'b');
    await assert.rejects(a!.send({ nodeId: 'ghost', address: network.addressOf('ghost') }, { type: 'x' }), (err: unknown) => err instanceof TransportError && /no node "ghost"/.test(err.message) && err.peer === 'ghost');
    await assert.rejects(a!.send({ nodeId: 'b', address: 'inproc://elsewhere/b' }, { type: 'x' }), TransportError);
    await assert.rejects(a!.send({ nodeId: 'b', address: 'tcp://127.0.0.1:1' }, { type: 'x' }), TransportError);
    // Messages queued for a node that closes before delivery are dropped.
    let got = 0;
    b!.onMessage(() => got++);
    await a!.send(peer(b!), { type: 'lost' });
    await b!.close();
    await assert.rejects(a!.send(peer(b!), { type: 'x' }), /no node "b"/);
    await a!.close();
    await assert.rejects(a!.send(peer(b!), { type: 'x' }), /closed/);
    await assert.rejects(new InProcessTransport('fresh', network).send(peer(b!), { type: 'x' }), /not started/);
    // Delivery runs from setImmediate, so one later setImmediate runs after it: the dropped
    // message would have arrived by then.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(got, 0);
  });

  it('partitions and heals a pair of nodes (both directions, others unaffected)', { timeout: 10_000 }, async () => {
    const { network, transports: [a, b, c] } = await nodes('a', 'b', 'c');
    const received: string[] = [];
    for (const t of [a, b, c]) t!.onMessage((from, m) => received.push(`${from}->${t!.nodeId}:${m.type}`));
    network.partition('a', 'b');
    assert.ok(network.isPartitioned('b', 'a'));
    await assert.rejects(a!.send(peer(b!), { type: 'x' }), (err: unknown) => err instanceof TransportError && /partition between a and b/.test(err.message));
    await assert.rejects(b!.send(peer(a!), { type: 'x' }), /partition between b and a/);
    await a!.send(peer(c!), { type: 'ac' });
    await c!.send(peer(b!), { type: 'cb' });
    await waitFor(() => received.length === 2, 'unpartitioned pairs deliver');
    network.heal('b', 'a');
    await a!.send(peer(b!), { type: 'ab' });
    await b!.send(peer(a!), { type: 'ba' });
    await waitFor(() => received.length === 4, 'healed pair delivers');
    assert.deepEqual(received.sort(), ['a->b:ab', 'a->c:ac', 'b->a:ba', 'c->b:cb']);
    // A partition that starts while a message is in flight loses it.
    await a!.send(peer(b!), { type: 'in-flight' });
    network.partition('a', 'b');
    await c!.send(peer(b!), { type: 'marker' });
    await waitFor(() => received.includes('c->b:marker'), 'marker');
    assert.ok(!received.includes('a->b:in-flight'));
    network.healAll();
    assert.equal(network.isPartitioned('a', 'b'), false);
    await Promise.all([a, b, c].map((t) => t!.close()));
  });

  it('keeps delivering when a handler throws', { timeout: 10_000 }, async () => {
    const { transports: [a, b] } = await nodes('a', 'b');
    const quiet = !logEnabled('warn');
    setLogLevel('error'); // the handler's errors are logged as warnings: keep the output clean
    const seen: number[] = [];
    b!.onMessage(() => {
      throw new Error('handler bug');
    });
    const off = b!.onMessage((_f, m) => seen.push(m.n as number));
    await Promise.all([1, 2, 3].map((n) => a!.send(peer(b!), { type: 'n', n })));
    await waitFor(() => seen.length === 3, 'three messages');
    assert.deepEqual(seen, [1, 2, 3]);
    if (!quiet) setLogLevel('warn');
    off();
    await Promise.all([a!.close(), b!.close()]);
  });
});
