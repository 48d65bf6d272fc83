/**
 * Tests of the test-support harness itself: a real 3-server ZooKeeper ensemble (leader
 * failover, restart, cleanup) and the fault-injecting TCP proxy (against a local echo server).
 * Every wait is event-driven or polls under an explicit deadline.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { fourLetterWord, startEnsemble, type ZkEnsemble, type ZkServerHandle } from './zk-ensemble.js';

// ---------------------------------------------------------------------------------------------
// Waiting helpers

/** Polls `probe` until it returns something other than undefined, or fails at the deadline. */
async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(50);
  }
}

/**
 * Resolves with the event's arguments, or fails after `timeoutMs`. Unlike events.once() it
 * does not reject on 'error': a reset socket emits 'error' before the 'close' a test waits for.
 */
function eventWithin(emitter: NodeJS.EventEmitter, event: string, timeoutMs: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args);
    };
    emitter.once(event, listener);
  });
}

/** Collects what a socket (or any readable) receives; `waitFor(text)` resolves once that much has arrived. */
class Received {
  text = '';
  private waiters = new Set<() => void>();

  constructor(stream: Readable) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      for (const wake of this.waiters) wake();
    });
  }

  waitFor(expected: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!this.text.includes(expected)) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`did not receive ${JSON.stringify(expected)} within ${timeoutMs} ms (got ${JSON.stringify(this.text)})`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

/** True once `pid` is gone or a zombie (PID 1 here does not always reap orphans). */
function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function modeOf(server: ZkServerHandle): Promise<string | undefined> {
  return /^Mode: (\w+)/m.exec(await fourLetterWord(server.clientPort, 'srvr'))?.[1];
}

// ---------------------------------------------------------------------------------------------
// ZooKeeper ensemble

describe('ZooKeeper ensemble', { timeout: 240_000 }, () => {
  let ensemble: ZkEnsemble | undefined;
  const pids = new Set<number>();
  const recordPids = (): void => {
    for (const s of ensemble!.servers) if (s.pid !== undefined) pids.add(s.pid);
  };

  after(() => ensemble?.stop());

  it('starts three servers that all answer ruok', { timeout: 90_000 }, async (t) => {
    const started = Date.now();
    ensemble = await startEnsemble();
    recordPids();
    t.diagnostic(`ensemble of 3 started in ${Date.now() - started} ms`);
    assert.equal(ensemble.servers.length, 3);
    assert.match(ensemble.connectionString, /^zk:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    assert.equal(ensemble.connectionString, `zk://${ensemble.hosts}`);
    for (const server of ensemble.servers) {
      assert.equal(server.running, true);
      assert.equal(await fourLetterWord(server.clientPort, 'ruok'), 'imok');
    }
  });

  it('has exactly one leader', { timeout: 30_000 }, async () => {
    const modes = await Promise.all(ensemble!.servers.map(modeOf));
    assert.deepEqual([...modes].sort(), ['follower', 'follower', 'leader']);
    const leader = await ensemble!.leader();
    assert.equal(modes[ensemble!.servers.indexOf(leader)], 'leader');
  });

  it('elects a new leader among the other two when the leader stops', { timeout: 60_000 }, async () => {
    const old = await ensemble!.leader();
    await old.stop();
    assert.equal(old.running, false);
    const next = await waitFor('a new leader', 30_000, async () => {
      const leader = await ensemble!.leader().catch(() => undefined);
      return leader && leader.id !== old.id ? leader : undefined;
    });
    assert.notEqual(next.id, old.id);
    await ensemble!.waitForQuorum(30_000);
    const modes = await Promise.all(ensemble!.servers.filter((s) => s !== old).map(modeOf));
    assert.deepEqual(modes.sort(), ['follower', 'leader']);
  });

  it('rejoins a restarted server into a quorum of three', { timeout: 60_000 }, async () => {
    const stopped = ensemble!.servers.find((s) => !s.running);
    assert.ok(stopped, 'one server should be stopped by the previous test');
    await stopped.start();
    recordPids();
    assert.equal(stopped.running, true);
    await ensemble!.waitForQuorum(30_000);
    const modes = await Promise.all(ensemble!.servers.map(modeOf));
    assert.deepEqual(modes.sort(), ['follower', 'follower', 'leader']);
  });

  it('stop() leaves no server process and no data dir behind', { timeout: 30_000 }, async () => {
    const dirs = ensemble!.servers.map((s) => path.dirname(s.logFile));
    await ensemble!.stop();
    assert.equal(pids.size, 4); // three first JVMs plus the restarted one
    for (const pid of pids) assert.ok(isDead(pid), `ZooKeeper pid ${pid} is still alive`);
    for (const s of ensemble!.servers) assert.equal(s.running, false);
    for (const dir of dirs) assert.equal(existsSync(dir), false, `${dir} was not removed`);
  });
});

describe('ZooKeeper ensemble cleanup on process exit', { timeout: 120_000 }, () => {
  const helper = fileURLToPath(new URL('./zk-ensemble.ts', import.meta.url));
  // A child test process that starts an ensemble, prints the JVM pids and never calls stop().
  const script = `
    const { startEnsemble } = await import(${JSON.stringify(helper)});
    const e = await startEnsemble({ size: 1 });
    console.log(JSON.stringify(e.servers.map((s) => s.pid)));
    if (process.argv.includes('--linger')) setInterval(() => {}, 1000);
  `;

  for (const [name, linger] of [['when it ends naturally', false], ['when it gets SIGTERM', true]] as const) {
    it(`kills the JVMs ${name}`, { timeout: 60_000 }, async () => {
      const args = ['--import', 'tsx', '--input-type=module', '-e', script, ...(linger ? ['--', '--linger'] : [])];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = eventWithin(child, 'exit', 55_000);
      let childPids: number[] = [];
      try {
        const out = new Received(child.stdout);
        await out.waitFor(']', 50_000);
        childPids = JSON.parse(out.text) as number[];
        assert.equal(childPids.length, 1);
        if (linger) child.kill('SIGTERM');
        await exited;
        await waitFor('the orphaned JVM to die', 10_000, () => (childPids.every(isDead) ? true : undefined));
      } finally {
        // Whatever failed above, leave nothing running that would keep this test file alive.
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        for (const pid of childPids) if (!isDead(pid)) process.kill(pid, 'SIGKILL');
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// TCP proxy

describe('TCP proxy', { timeout: 60_000 }, () => {
  const upstreamSockets: net.Socket[] = [];
  let upstreamBytes = 0;
  // A tiny echo server standing in for a ZooKeeper server.
  const echo = net.createServer((socket) => {
    upstreamSockets.push(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      upstreamBytes += chunk.length;
      socket.write(chunk);
    });
  });
  let proxy: TcpProxy;

  const connect = async (): Promise<{ socket: net.Socket; received: Received }> => {
    const socket = net.connect({ host: '127.0.0.1', port: proxy.port });
    socket.on('error', () => {}); // resets are expected in these tests; 'close' is what they check
    const received = new Received(socket);
    await eventWithin(socket, 'connect', 5_000);
    return { socket, received };
  };

  const open = async (): Promise<void> => {
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await startTcpProxy({ host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port });
  };

  after(async () => {
    await proxy?.close();
    for (const s of upstreamSockets) s.destroy();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  it('passes bytes both ways and reports them', { timeout: 10_000 }, async () => {
    await open();
    assert.equal(proxy.address, `127.0.0.1:${proxy.port}`);
    const seen = { up: 0, down: 0 };
    const unsubscribe = proxy.onData((direction, bytes) => (seen[direction] += bytes));
    const { socket, received } = await connect();
    socket.write('hello');
    await received.waitFor('hello', 5_000);
    assert.equal(proxy.connections(), 1);
    assert.deepEqual(seen, { up: 5, down: 5 });
    unsubscribe();
    socket.write('again');
    await received.waitFor('helloagain', 5_000);
    assert.deepEqual(seen, { up: 5, down: 5 }, 'no reports after unsubscribe');
    socket.destroy();
    await waitFor('the pair to go away', 5_000, () => (proxy.connections() === 0 ? true : undefined));
  });

  it('cutAll() closes the client socket', { timeout: 10_000 }, async () => {
    const { socket, received } = await connect();
    socket.write('ping');
    await received.waitFor('ping', 5_000); // the pair is fully established
    const closed = eventWithin(socket, 'close', 5_000);
    proxy.cutAll();
    assert.equal(proxy.connections(), 0);
    await closed;
  });

  it('blackhole drops bytes both ways but keeps the sockets open', { timeout: 10_000 }, async () => {
    const { socket, received } = await connect();
    socket.write('a');
    await received.waitFor('a', 5_000);
    const serverSide = upstreamSockets.at(-1)!;
    const bytesBefore = upstreamBytes;

    proxy.setBlackhole(true);
    // Wait until the proxy has seen each dropped write, so its fate is decided.
    const arrived = { up: 0, down: 0 };
    const unsubscribe = proxy.onData((direction, bytes) => (arrived[direction] += bytes));
    socket.write('lost');
    serverSide.write('pushed');
    await waitFor('the proxy to receive both writes', 5_000, () =>
      arrived.up === 4 && arrived.down === 6 ? true : undefined,
    );
    unsubscribe();
    assert.equal(upstreamBytes, bytesBefore, 'nothing reached the server');
    assert.equal(socket.destroyed, false);
    assert.equal(proxy.connections(), 1);

    proxy.setBlackhole(false);
    socket.write('b');
    // TCP keeps order: had 'lost' or 'pushed' gone through, they would arrive before 'b'.
    await received.waitFor('ab', 5_000);
    assert.equal(received.text, 'ab');
    assert.equal(upstreamBytes, bytesBefore + 1);
    socket.destroy();
  });

  it('refuse closes new connections without reaching the server', { timeout: 10_000 }, async () => {
    const connectionsBefore = upstreamSockets.length;
    proxy.setRefuse(true);
    const socket = net.connect({ host: '127.0.0.1', port: proxy.port });
    socket.on('error', () => {});
    await eventWithin(socket, 'close', 5_000);
    assert.equal(upstreamSockets.length, connectionsBefore);

    proxy.setRefuse(false);
    const { socket: again, received } = await connect();
    again.write('back');
    await received.waitFor('back', 5_000);
    again.destroy();
  });

  it('survives a server that refuses connections', { timeout: 10_000 }, async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const tmp = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = tmp.address() as net.AddressInfo;
        tmp.close(() => resolve(port));
      });
    });
    const dead = await startTcpProxy({ host: '127.0.0.1', port: closedPort });
    try {
      const socket = net.connect({ host: '127.0.0.1', port: dead.port });
      socket.on('error', () => {});
      await eventWithin(socket, 'close', 5_000);
      assert.equal(dead.connections(), 0);
    } finally {
      await dead.close();
    }
  });
});
