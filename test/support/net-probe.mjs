// Test support, run inside test hosts by the hosts self-test (plain JavaScript: no build, no tsx).
//   node net-probe.mjs echo HOST PORT          echoes every connection; prints "listening" once bound
//   node net-probe.mjs ping HOST PORT TIMEOUT  one round trip of 64 bytes; prints "ok MS" or "fail CODE"
//   node net-probe.mjs udp-echo HOST PORT      echoes every datagram; prints "listening" once bound
//   node net-probe.mjs udp-burst HOST PORT N   sends N datagrams (1 ms apart), prints "got K" (replies within 1 s of the last)
import dgram from 'node:dgram';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const [mode, host, port, timeout] = process.argv.slice(2);
if (mode === 'echo') {
  net.createServer((s) => { s.on('error', () => {}); s.pipe(s); }).listen(Number(port), host, () => console.log('listening'));
} else if (mode === 'ping') {
  const started = performance.now();
  const socket = net.connect({ host, port: Number(port), noDelay: true });
  const fail = (code) => { console.log(`fail ${code}`); process.exit(0); };
  socket.setTimeout(Number(timeout), () => fail('TIMEOUT'));
  socket.on('error', (err) => fail(err.code ?? err.message));
  const payload = Buffer.alloc(64, 7);
  let got = 0;
  socket.on('connect', () => socket.write(payload));
  socket.on('data', (d) => {
    got += d.length;
    if (got >= payload.length) {
      console.log(`ok ${(performance.now() - started).toFixed(1)}`);
      process.exit(0);
    }
  });
} else if (mode === 'udp-echo') {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, from) => socket.send(msg, from.port, from.address));
  socket.bind(Number(port), host, () => console.log('listening'));
} else if (mode === 'udp-burst') {
  const n = Number(timeout);
  const socket = dgram.createSocket('udp4');
  const seen = new Set();
  socket.on('message', (msg) => seen.add(msg.readUInt32BE(0)));
  for (let i = 0; i < n; i++) {
    const msg = Buffer.alloc(4);
    msg.writeUInt32BE(i);
    socket.send(msg, Number(port), host);
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`got ${seen.size}`);
  process.exit(0);
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
