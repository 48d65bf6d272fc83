/**
 * Transport throughput: one sender streaming to one receiver, small (100-byte frames) and
 * large (1 MiB payload) messages, on loopback, side by side in one run:
 *
 * - "plain TCP socket, framed": the same frames (frame-codec.ts, one corked write per turn) on a bare
 *   net.Socket: what the plaintext transport before the node channel did, without its bookkeeping
 *   (the baseline of the target: the transport over TLS >= 0.7x this for small messages);
 * - "TLS socket, framed": the same on a bare TLS 1.3 socket with the node channel's settings
 *   (cost of the encryption alone);
 * - "TcpTransport (mutual TLS)": tidepool's transport as nodes use it;
 * - in-process.
 *
 * The sender keeps at most a window of messages unreceived (flow control, so that memory stays bounded
 * and the rate is what the receiver really gets), for a fixed time per case.
 *
 *   npx tsx bench/transport.ts [--seconds S] [--repeat R]
 *
 * The cases run interleaved R times; the fastest repeat of each is reported (every sample is kept).
 *
 * Writes bench/results/transport.json. MB/s counts message bytes (10^6 bytes per MB): the encoded
 * frame size for small messages, the 1 MiB payload for large ones.
 */
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { channelCredentials } from '../src/transport/channel-credentials.js';
import { encodeFrame, encodeFrameParts, FrameDecoder } from '../src/transport/frame-codec.js';
import { InProcessNetwork, InProcessTransport } from '../src/transport/in-process-transport.js';
import { TcpTransport } from '../src/transport/tcp-transport.js';
import type { Message, PeerAddress, Transport } from '../src/transport/types.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '2' }, repeat: { type: 'string', default: '3' } } });
const SECONDS = Number(values.seconds);
const REPEAT = Number(values.repeat);

interface Case {
  name: string;
  /** Bytes one message counts for. */
  bytes: number;
  make: (seq: number) => Message;
  /** Messages per batch of sends, and most messages sent but not yet received. */
  batch: number;
  window: number;
}

const padding = 'x'.repeat(100);
function smallMessage(seq: number): Message {
  return { type: 'bench', seq, payload: padding };
}
// Pad so that the whole frame (prefix included) is 100 bytes.
const smallPad = 100 - (encodeFrame(smallMessage(1_000_000)).length - padding.length);
const small = (seq: number): Message => ({ type: 'bench', seq, payload: padding.slice(0, smallPad) });

const blob = Buffer.alloc(1024 * 1024, 7);
const cases: Case[] = [
  { name: 'small (100 B)', bytes: encodeFrame(small(1_000_000)).length, make: small, batch: 500, window: 20_000 },
  { name: 'large (1 MiB)', bytes: blob.length, make: (seq) => ({ type: 'bench', seq, payload: blob }), batch: 4, window: 16 },
];

interface Result {
  transport: string;
  message: string;
  messageBytes: number;
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  megabytesPerSecond: number;
}

async function run(transport: string, sender: Transport, receiver: Transport, c: Case): Promise<Result> {
  const to: PeerAddress = { nodeId: receiver.nodeId, address: receiver.address };
  let received = 0;
  let waiting: { until: number; resolve: () => void } | undefined;
  const off = receiver.onMessage(() => {
    received++;
    if (waiting && received >= waiting.until) {
      waiting.resolve();
      waiting = undefined;
    }
  });
  const receivedAtLeast = (n: number) =>
    received >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { until: n, resolve }));

  // Warm-up: connection set up, code optimized.
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: c.batch }, (_, k) => sender.send(to, c.make(k))));
  await receivedAtLeast(3 * c.batch);
  received = 0;

  let sent = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  while (performance.now() < end) {
    const sends: Array<Promise<void>> = [];
    for (let k = 0; k < c.batch; k++) sends.push(sender.send(to, c.make(sent++)));
    await Promise.all(sends);
    if (sent - received > c.window) await receivedAtLeast(sent - c.window);
  }
  await receivedAtLeast(sent);
  const seconds = (performance.now() - start) / 1000;
  off();
  return {
    transport, message: c.name, messageBytes: c.bytes, messages: sent, seconds,
    messagesPerSecond: sent / seconds, megabytesPerSecond: (sent * c.bytes) / seconds / 1e6,
  };
}

/**
 * A bare socket carrying frames one way, as a Transport for run(): the sender corks the frames sent in
 * one turn into one write, the receiver decodes them; no connection management, no authentication.
 */
async function framedSocketPair(secure: boolean): Promise<{ sender: Transport; receiver: Transport; close: () => Promise<void> }> {
  const credentials = secure ? channelCredentials('bench', { secrets: [SECRET] }) : undefined;
  const handlers: Array<(from: string, m: Message) => void> = [];
  const onSocket = (socket: net.Socket) => {
    socket.setNoDelay(true);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const m of decoder.push(chunk)) for (const h of handlers) h('sender', m);
    });
  };
  const server = credentials
    ? tls.createServer({ ...credentials.tlsOptions, requestCert: true, rejectUnauthorized: true }, onSocket)
    : net.createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const socket = credentials
    ? tls.connect({ host: '127.0.0.1', port, secureContext: credentials.secureContext, checkServerIdentity: () => undefined, highWaterMark: 256 * 1024 } as tls.ConnectionOptions)
    : net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once(credentials ? 'secureConnect' : 'connect', () => resolve());
    socket.once('error', reject);
  });
  socket.setNoDelay(true);
  let corked = false;
  const sender: Transport = {
    nodeId: 'sender', address: 'bench://sender', start: async () => undefined, onMessage: () => () => undefined,
    close: async () => undefined,
    send(_to, message) {
      if (!corked) {
        corked = true;
        socket.cork();
        queueMicrotask(() => {
          corked = false;
          socket.uncork();
        });
      }
      for (const part of encodeFrameParts(message)) socket.write(part);
      return Promise.resolve();
    },
  };
  const receiver: Transport = {
    nodeId: 'receiver', address: 'bench://receiver', start: async () => undefined, send: () => Promise.resolve(), close: async () => undefined,
    onMessage(h) {
      handlers.push(h);
      return () => handlers.splice(handlers.indexOf(h), 1);
    },
  };
  const close = async () => {
    socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { sender, receiver, close };
}

const SECRET = 'bench-secret-of-enough-length';
/** Every sample; the table keeps the fastest repeat of each (transport, message): the least disturbed by other load. */
const samples: Result[] = [];
for (let round = 0; round < REPEAT; round++) {
  for (const c of cases) {
    for (const secure of [false, true]) {
      const pair = await framedSocketPair(secure);
      samples.push(await run(secure ? 'TLS socket, framed' : 'plain TCP socket, framed', pair.sender, pair.receiver, c));
      await pair.close();
    }

    const a = new TcpTransport({ nodeId: 'sender', secret: SECRET });
    const b = new TcpTransport({ nodeId: 'receiver', secret: SECRET });
    await Promise.all([a.start(), b.start()]);
    samples.push(await run('TcpTransport (mutual TLS)', a, b, c));
    await Promise.all([a.close(), b.close()]);

    const network = InProcessNetwork.get(`bench-${process.pid}`);
    const x = new InProcessTransport('sender', network);
    const y = new InProcessTransport('receiver', network);
    await Promise.all([x.start(), y.start()]);
    samples.push(await run('in-process', x, y, c));
    await Promise.all([x.close(), y.close()]);
  }
}
const results: Result[] = [];
for (const r of samples) {
  const i = results.findIndex((x) => x.transport === r.transport && x.message === r.message);
  if (i < 0) results.push(r);
  else if (r.messagesPerSecond > results[i]!.messagesPerSecond) results[i] = r;
}

console.log(`transport throughput: one sender, one receiver, ${SECONDS} s per case, fastest of ${REPEAT} (load average ${machineInfo().loadAverage})\n`);
printTable([
  ['transport', 'message', 'messages', 'seconds', 'msg/s', 'MB/s'],
  ...results.map((r) => [r.transport, r.message, r.messages, r.seconds, Math.round(r.messagesPerSecond), r.megabytesPerSecond]),
]);
const rate = (transport: string, message: string) => results.find((r) => r.transport === transport && r.message === message)!.messagesPerSecond;
const ratios = Object.fromEntries(cases.map((c) => [c.name, {
  transportOverPlainTcp: rate('TcpTransport (mutual TLS)', c.name) / rate('plain TCP socket, framed', c.name),
  transportOverTlsSocket: rate('TcpTransport (mutual TLS)', c.name) / rate('TLS socket, framed', c.name),
}]));
console.log(`\nbaseline: the plaintext transport is gone (the node channel replaced it), so "plain TCP socket, framed" stands in for it:
the same frames (frame-codec.ts, one corked write per turn) on a bare net.Socket, without connection management or
authentication; what the old transport's data path did, and a little less.`);
for (const [name, r] of Object.entries(ratios)) {
  const target = name.startsWith('small') ? ` (target >= 0.7x: ${r.transportOverPlainTcp >= 0.7 ? 'met' : 'NOT met'})` : '';
  console.log(`${name}: TcpTransport over TLS / plain TCP socket ${r.transportOverPlainTcp.toFixed(2)}x${target}; / TLS socket ${r.transportOverTlsSocket.toFixed(2)}x`);
}
writeFileSync(resultsFile('transport'), `${JSON.stringify({ machine: machineInfo(), seconds: SECONDS, repeat: REPEAT, results, ratios, samples, target: { small: 0.7 } }, null, 2)}\n`);
