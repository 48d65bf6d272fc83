/**
 * The latency proxy (latency-proxy.ts) on loopback: with jitter as large as the latency, a byte
 * stream still arrives whole and in order, each way, and a half-close lets the other way finish.
 * (A timer per chunk once swapped chunks due in the same millisecond: ZooKeeper clients behind the
 * proxy then saw replies out of order, dropped their connections and crashed on what followed.)
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.js';
import { withDeadline } from './wait.js';

describe('latency proxy', () => {
  let echo: net.Server;
  let proxy: LatencyProxy;

  before(async () => {
    // Sends back every byte it receives, and ends when its client ends.
    echo = net.createServer({ allowHalfOpen: true }, (s) => s.pipe(s));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const { port } = echo.address() as net.AddressInfo;
    proxy = await startLatencyProxy({ listenHost: '127.0.0.1', target: { host: '127.0.0.1', port }, latencyMs: 5, jitterMs: 5 });
  });
  after(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  it('keeps a stream\'s bytes in order through jitter, both ways', async () => {
    const socket = net.connect({ host: proxy.host, port: proxy.port, noDelay: true });
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    const ended = new Promise<void>((resolve) => socket.on('end', resolve));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // 3000 numbered writes, a few per event loop turn, so that many chunks are due in the same millisecond.
    const sent: Buffer[] = [];
    for (let i = 0; i < 3000; i++) {
      const chunk = Buffer.from(`${i},`);
      sent.push(chunk);
      socket.write(chunk);
      if (i % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    socket.end();
    await withDeadline(ended, 'the echo of every write through the proxy', 30_000);
    const got = Buffer.concat(received).toString().split(',');
    const want = Buffer.concat(sent).toString().split(',');
    const first = want.findIndex((w, i) => got[i] !== w);
    assert.equal(first, -1, `write ${want[first]} came back as ${got[first]} (then ${got.slice(first + 1, first + 6).join(',')}…)`);
    assert.equal(got.length, want.length);
  });
});
