import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFrame, FrameDecoder } from '../../src/transport/frame-codec.js';
import type { HandshakeOptions } from '../../src/transport/handshake.js';
import { ClientHandshake, HandshakeError, HandshakeTypes, ServerHandshake } from '../../src/transport/handshake.js';
import type { Message } from '../../src/transport/types.js';

const SECRET = 'correct horse battery staple';

/** Passes a handshake message through the frame codec, as a connection would. */
function wire(message: Message): Message {
  const out = new FrameDecoder().push(encodeFrame(message));
  assert.equal(out.length, 1);
  return out[0]!;
}

function server(options: Partial<HandshakeOptions> = {}): ServerHandshake {
  return new ServerHandshake({ nodeId: 'server-1', secret: SECRET, ...options });
}

function client(options: Partial<HandshakeOptions> & { expectedPeer?: string } = {}): ClientHandshake {
  return new ClientHandshake({ nodeId: 'client-7', secret: SECRET, ...options });
}

/** Runs the three messages; returns them for inspection. */
function run(s: ServerHandshake, c: ClientHandshake) {
  const challenge = wire(s.start());
  const response = wire(c.receive(challenge).send!);
  const serverStep = s.receive(response);
  const accept = wire(serverStep.send!);
  const clientStep = c.receive(accept);
  return { challenge, response, accept, serverStep, clientStep };
}

function isHandshakeError(pattern: RegExp) {
  return (err: unknown) => err instanceof HandshakeError && pattern.test(err.message);
}

describe('handshake', { timeout: 30_000 }, () => {
  it('authenticates both sides with the same secret (string or Buffer)', { timeout: 5_000 }, () => {
    const s = server();
    const c = client({ expectedPeer: 'server-1', secret: Buffer.from(SECRET) });
    const { challenge, response, accept, serverStep, clientStep } = run(s, c);
    assert.equal(serverStep.peerNodeId, 'client-7');
    assert.equal(clientStep.peerNodeId, 'server-1');
    assert.equal(clientStep.send, undefined);
    assert.equal(s.state, 'done');
    assert.equal(c.state, 'done');
    assert.equal(s.peerNodeId, 'client-7');
    assert.equal(c.peerNodeId, 'server-1');
    // The secret never crosses the wire.
    const bytes = Buffer.concat([challenge, response, accept].map((m) => encodeFrame(m)));
    assert.equal(bytes.indexOf(Buffer.from(SECRET)), -1);
    assert.equal(bytes.indexOf(Buffer.from('horse')), -1);
    // A finished handshake accepts nothing more.
    assert.throws(() => s.receive(response), HandshakeError);
  });

  it('fails on both sides with a wrong secret', { timeout: 5_000 }, () => {
    // The server detects a client with the wrong secret.
    const s = server();
    const c = client({ secret: 'wrong' });
    const response = wire(c.receive(wire(s.start())).send!);
    assert.throws(() => s.receive(response), isHandshakeError(/authentication failed: client proof/));
    assert.equal(s.state, 'failed');
    assert.match(s.error!.message, /client proof/);

    // The client detects a server with the wrong secret. Such a server would refuse the client
    // first, so its accept is made by a wrong-secret server reusing the challenge's nonce, talking
    // to a wrong-secret client reusing the good client's nonce: the accept then answers the good
    // client's exchange, but with a proof made from the wrong secret.
    const c2 = client();
    const challenge = wire(server().start());
    const goodResponse = wire(c2.receive(challenge).send!);
    const liar = server({ secret: 'wrong', randomBytes: () => Buffer.from(challenge.nonce as Uint8Array) });
    const wrongClient = client({ secret: 'wrong', randomBytes: () => Buffer.from(goodResponse.nonce as Uint8Array) });
    const accept = wire(liar.receive(wire(wrongClient.receive(wire(liar.start())).send!)).send!);
    assert.throws(() => c2.receive(accept), isHandshakeError(/authentication failed: server proof/));
    assert.equal(c2.state, 'failed');
  });

  it('fails on tampered, malformed or unexpected messages', { timeout: 5_000 }, () => {
    const flip = (bytes: unknown): Buffer => {
      const copy = Buffer.from(bytes as Uint8Array);
      copy[0]! ^= 1;
      return copy;
    };
    const tamperings: Array<[string, (m: Message) => Message, RegExp]> = [
      ['client mac', (m) => ({ ...m, mac: flip(m.mac) }), /client proof/],
      ['client nonce', (m) => ({ ...m, nonce: flip(m.nonce) }), /client proof/],
      ['client node id', (m) => ({ ...m, nodeId: 'client-8' }), /client proof/],
      ['short mac', (m) => ({ ...m, mac: Buffer.from(m.mac as Uint8Array).subarray(1) }), /mac is not 32 bytes/],
      ['mac as string', (m) => ({ ...m, mac: 'x'.repeat(32) }), /mac is not 32 bytes/],
      ['missing node id', (m) => ({ ...m, nodeId: undefined }), /nodeId is not/],
      ['huge node id', (m) => ({ ...m, nodeId: 'n'.repeat(1000) }), /nodeId is not/],
      ['wrong type', (m) => ({ ...m, type: 'hello' }), /expected tidepool\/handshake-response, got "hello"/],
    ];
    for (const [what, tamper, pattern] of tamperings) {
      const s = server();
      const c = client();
      const response = wire(c.receive(wire(s.start())).send!);
      assert.throws(() => s.receive(wire(tamper(response))), isHandshakeError(pattern), what);
      assert.equal(s.state, 'failed', what);
      assert.throws(() => s.receive(response), HandshakeError, `${what}: a failed handshake stays failed`);
    }

    const serverTamperings: Array<[string, (m: Message) => Message, RegExp]> = [
      ['server mac', (m) => ({ ...m, mac: flip(m.mac) }), /server proof/],
      ['server node id', (m) => ({ ...m, nodeId: 'server-2' }), /server proof/],
      ['rejection', () => ServerHandshake.rejection('go away'), /rejected by peer: go away/],
    ];
    for (const [what, tamper, pattern] of serverTamperings) {
      const s = server();
      const c = client();
      const response = wire(c.receive(wire(s.start())).send!);
      const accept = wire(s.receive(response).send!);
      assert.throws(() => c.receive(wire(tamper(accept))), isHandshakeError(pattern), what);
      assert.equal(c.state, 'failed', what);
    }

    // Challenge problems seen by the client.
    assert.throws(() => client().receive({ type: HandshakeTypes.challenge, version: 2, nonce: Buffer.alloc(32) }), isHandshakeError(/unsupported handshake version/));
    assert.throws(() => client().receive({ type: HandshakeTypes.challenge, version: 1, nonce: Buffer.alloc(31) }), isHandshakeError(/nonce is not 32 bytes/));
    assert.throws(() => client().receive({ type: 'app-message' }), isHandshakeError(/expected tidepool\/handshake-challenge/));
    assert.throws(() => client().receive(null), isHandshakeError(/malformed handshake message/));
    // The right secret but the wrong node: the client asked for another one.
    const s = server();
    const c = client({ expectedPeer: 'server-2' });
    assert.throws(() => run(s, c), isHandshakeError(/connected to node "server-1", expected "server-2"/));
  });

  it('fails after the deadline', { timeout: 5_000 }, () => {
    let now = 1_000;
    const clock = () => now;
    const s = server({ now: clock, timeoutMs: 100 });
    const c = client({ now: clock, timeoutMs: 100 });
    const challenge = wire(s.start());
    now += 50;
    const response = wire(c.receive(challenge).send!);
    now += 51;
    assert.throws(() => s.receive(response), isHandshakeError(/timed out after 100 ms/));
    assert.equal(s.state, 'failed');
    // The connection's timer expires a handshake that is still waiting.
    assert.match(c.expire().message, /timed out after 100 ms/);
    assert.equal(c.state, 'failed');
  });

  it('makes nothing reusable: replayed replies fail against fresh nonces', { timeout: 5_000 }, () => {
    // Record a complete, successful exchange.
    const recorded = run(server(), client());
    assert.equal(recorded.serverStep.peerNodeId, 'client-7');

    // Replaying the client's response against a new server (new nonce) fails.
    const s = server();
    const challenge = wire(s.start());
    assert.notDeepEqual(challenge.nonce, recorded.challenge.nonce);
    assert.throws(() => s.receive(recorded.response), isHandshakeError(/client proof/));

    // Replaying the server's accept to a new client (new nonce) fails.
    const c = client();
    c.receive(recorded.challenge);
    assert.throws(() => c.receive(recorded.accept), isHandshakeError(/server proof/));

    // Reflection: the server's proof is not a client proof for the same nonces.
    const s2 = server();
    const c2 = client();
    const response = wire(c2.receive(wire(s2.start())).send!);
    const accept = s2.receive(response).send!;
    const s3 = server({ randomBytes: () => Buffer.from(response.nonce as Uint8Array) });
    s3.start();
    assert.throws(() => s3.receive({ ...response, mac: accept.mac }), HandshakeError);
  });

  it('refuses an empty secret or node id', { timeout: 5_000 }, () => {
    assert.throws(() => server({ secret: '' }), /non-empty/);
    assert.throws(() => client({ secret: Buffer.alloc(0) }), /non-empty/);
    assert.throws(() => server({ nodeId: '' }), /node id/);
  });
});
