/**
 * Test support: a loopback TCP proxy that a test drives to inject network faults between a
 * client and one server (cut connections, a silent partition, refused connections), and to play a
 * man in the middle (see every byte, rewrite the next chunk: alter, inject, replay).
 * "up" is client -> server, "down" is server -> client.
 */
import net from 'node:net';

export type Direction = 'up' | 'down';

export interface TcpProxy {
  port: number;
  /** "127.0.0.1:port", to hand to a client instead of the server's address. */
  address: string;
  /** Live client<->server socket pairs (a pair is gone once either side has closed). */
  connections(): number;
  /** Reset (RST) both sockets of every live pair now, as a broken network would. */
  cutAll(): void;
  /**
   * While on, sockets stay open but every byte is dropped in both directions, and a close on
   * one side is not passed to the other (it is, once the blackhole is lifted): a partition.
   */
  setBlackhole(on: boolean): void;
  /** While on, new incoming connections are reset as soon as they are accepted. */
  setRefuse(on: boolean): void;
  /** Observes bytes arriving at the proxy (also those a blackhole then drops); returns unsubscribe. */
  onData(cb: (direction: Direction, bytes: number, chunk: Buffer) => void): () => void;
  /**
   * Replaces the next chunk to arrive in `direction` by what `rewrite` returns (forwarded in order);
   * resolves once it has been applied.
   */
  rewriteNext(direction: Direction, rewrite: (chunk: Buffer) => Buffer[]): Promise<void>;
  /** Closes the listener and every pair. */
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
  /** A side went away during a blackhole; the other side is reset when the blackhole lifts. */
  closePending: boolean;
}

/** Sends RST (what a broken network shows) and destroys; a no-op on a socket already gone. */
function reset(socket: net.Socket): void {
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** Where the proxy forwards to: an endpoint, or one known later (connections wait for it). */
export type ProxyTarget = { host: string; port: number } | Promise<{ host: string; port: number }>;

export async function startTcpProxy(target: ProxyTarget): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const sockets = new Set<net.Socket>(); // every socket not yet closed, for close()
  const observers = new Set<(direction: Direction, bytes: number, chunk: Buffer) => void>();
  const rewrites: Record<Direction, Array<{ rewrite: (chunk: Buffer) => Buffer[]; done: () => void }>> = { up: [], down: [] };
  let blackhole = false;
  let refuse = false;

  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('error', () => {}); // ECONNRESET, ECONNREFUSED, EPIPE...: 'close' follows; never crash a test
    socket.on('close', () => sockets.delete(socket));
  };

  const resetPair = (pair: Pair): void => {
    pairs.delete(pair);
    reset(pair.client);
    reset(pair.server);
  };

  const forward = (pair: Pair, from: net.Socket, to: net.Socket, direction: Direction): void => {
    from.on('data', (chunk: Buffer) => {
      for (const cb of observers) cb(direction, chunk.length, chunk);
      if (blackhole || to.destroyed) return;
      const rewrite = rewrites[direction].shift();
      const out = rewrite ? rewrite.rewrite(chunk) : [chunk];
      rewrite?.done();
      let more = true;
      for (const part of out) more = to.write(part);
      // Respect backpressure so a slow side cannot make the proxy buffer without bound.
      if (!more) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
    // A FIN is passed on after the data before it; a partition hides it for now.
    from.on('end', () => {
      if (blackhole) pair.closePending = true;
      else to.end();
    });
    from.on('close', (hadError) => {
      if (!pairs.has(pair)) return;
      if (blackhole) {
        pair.closePending = true;
        return;
      }
      pairs.delete(pair);
      if (hadError) reset(to); // a reset (or refused upstream) shows as a reset on the other side
      else to.end();
    });
  };

  const server = net.createServer({ noDelay: true }, (client) => {
    track(client);
    if (refuse) {
      reset(client);
      return;
    }
    void Promise.resolve(target).then(({ host, port }) => {
      if (client.destroyed) return;
      const upstream = net.connect({ host, port, noDelay: true });
      track(upstream);
      const pair: Pair = { client, server: upstream, closePending: false };
      pairs.add(pair);
      forward(pair, client, upstream, 'up');
      forward(pair, upstream, client, 'down');
    });
  });
  server.on('error', () => {}); // the listener is already bound; later errors must not crash a test

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    address: `127.0.0.1:${port}`,
    connections: () => pairs.size,
    cutAll() {
      for (const pair of [...pairs]) resetPair(pair);
    },
    setBlackhole(on) {
      blackhole = on;
      // After a partition heals, a connection whose far end went away meanwhile is broken.
      if (!on) for (const pair of [...pairs]) if (pair.closePending) resetPair(pair);
    },
    setRefuse(on) {
      refuse = on;
    },
    onData(cb) {
      observers.add(cb);
      return () => observers.delete(cb);
    },
    rewriteNext(direction, rewrite) {
      return new Promise<void>((resolve) => rewrites[direction].push({ rewrite, done: resolve }));
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      pairs.clear();
      for (const socket of [...sockets]) socket.destroy();
      await closed;
    },
  };
}
