/**
 * Transport throughput: one sender streaming to one receiver, small (100-byte frames) and
 * large (1 MiB payload) messages, over TCP on loopback and in-process. The sender keeps at most
 * a window of messages unreceived (flow control, so that memory stays bounded and the rate is
 * what the receiver really gets), for a fixed time per case.
 *
 *   npx tsx bench/transport.ts [--seconds S]
 *
 * Writes bench/results/transport.json. MB/s counts message bytes (10^6 bytes per MB): the encoded
 * frame size for small messages, the 1 MiB payload for large ones.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { encodeFrame } from '../src/transport/frame-codec.js';
import { InProcessNetwork, InProcessTransport } from '../src/transport/in-process-transport.js';
import { TcpTransport } from '../src/transport/tcp-transport.js';
import type { Message, PeerAddress, Transport } from '../src/transport/types.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '2' } } });
const SECONDS = Number(values.seconds);

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

const results: Result[] = [];
for (const c of cases) {
  const secret = 'bench-secret';
  const a = new TcpTransport({ nodeId: 'sender', secret });
  const b = new TcpTransport({ nodeId: 'receiver', secret });
  await Promise.all([a.start(), b.start()]);
  results.push(await run('tcp (loopback)', a, b, c));
  await Promise.all([a.close(), b.close()]);

  const network = InProcessNetwork.get(`bench-${process.pid}`);
  const x = new InProcessTransport('sender', network);
  const y = new InProcessTransport('receiver', network);
  await Promise.all([x.start(), y.start()]);
  results.push(await run('in-process', x, y, c));
  await Promise.all([x.close(), y.close()]);
}

console.log(`transport throughput: one sender, one receiver, ${SECONDS} s per case\n`);
printTable([
  ['transport', 'message', 'messages', 'seconds', 'msg/s', 'MB/s'],
  ...results.map((r) => [r.transport, r.message, r.messages, r.seconds, Math.round(r.messagesPerSecond), r.megabytesPerSecond]),
]);
writeFileSync(resultsFile('transport'), `${JSON.stringify({ machine: machineInfo(), seconds: SECONDS, results }, null, 2)}\n`);
