/**
 * Test support: a TCP proxy that adds latency (this kernel has no netem queueing discipline). Every
 * chunk read from one side is written to the other `latencyMs` (± `jitterMs`, uniformly) after it
 * arrived, in order: a chunk is never written before the one read before it on the same side, so
 * jitter delays but cannot reorder a byte stream. A connection's close (FIN or reset) follows its
 * last bytes with the same delay.
 */
import net from 'node:net';

export interface LatencyOptions {
  /** Delay of every byte in each direction (ms). */
  latencyMs: number;
  /** Uniform jitter around the delay (ms; default 0). */
  jitterMs?: number;
}

export interface LatencyProxy {
  /** Where to dial instead of the target. */
  host: string;
  port: number;
  /** "host:port" */
  address: string;
  /** Changes the delay of bytes read from now on. */
  set(opts: LatencyOptions): void;
  connections(): number;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
  /** Destroys everything now (synchronous, for process exit). */
  destroy(): void;
}

export async function startLatencyProxy(opts: LatencyOptions & { listenHost: string; target: { host: string; port: number } }): Promise<LatencyProxy> {
  let latency = opts.latencyMs;
  let jitter = opts.jitterMs ?? 0;
  const check = (o: LatencyOptions) => {
    if (!(o.latencyMs >= 0) || !((o.jitterMs ?? 0) >= 0) || (o.jitterMs ?? 0) > o.latencyMs) throw new Error(`latency proxy: need 0 ≤ jitter ≤ latency, got ${o.latencyMs} ± ${o.jitterMs ?? 0} ms`);
  };
  check(opts);
  const sockets = new Set<net.Socket>();
  const delay = () => latency + (jitter > 0 ? (Math.random() * 2 - 1) * jitter : 0);

  /**
   * Bytes of `from` reach `to` after the delay, in order; then its end. One queue per direction with
   * one timer at its head: timers of different durations due in the same millisecond may fire in any
   * order, so a timer per chunk could swap two chunks of a byte stream.
   */
  const pipe = (from: net.Socket, to: net.Socket) => {
    const queue: Array<{ at: number; act: () => void }> = [];
    let timer: NodeJS.Timeout | undefined;
    const release = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.at <= Date.now()) queue.shift()!.act();
      if (queue.length > 0) timer = setTimeout(release, queue[0]!.at - Date.now());
    };
    const later = (act: () => void) => {
      // Never before the chunk read before it: jitter delays, it does not reorder.
      queue.push({ at: Math.max(Date.now() + delay(), queue.at(-1)?.at ?? 0), act });
      if (timer === undefined) timer = setTimeout(release, queue[0]!.at - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      later(() => {
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => later(() => to.end()));
    from.on('close', (hadError) => {
      if (hadError) later(() => to.resetAndDestroy());
    });
  };

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => {}); // resets and refusals end as 'close'
    s.on('close', () => sockets.delete(s));
  };

  /**
   * The proxy accepts at once, but its client only gets a connection once the target took one: a
   * refused connection is tried again every 50 ms for up to 2 s (a server about to listen, such as a
   * ZooKeeper leader just elected), and a target that cannot be reached (a host cut off) is given 2 s;
   * only then is the client reset. Accepting and resetting at once would show a client a connection
   * that breaks, not one that is slow to open: a ZooKeeper follower then gives up on the leader and
   * starts another election.
   */
  const server = net.createServer({ noDelay: true, allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    track(client);
    const giveUpAt = Date.now() + 2_000;
    let upstream: net.Socket | undefined;
    let connected = false;
    const giveUp = setTimeout(() => {
      if (connected) return;
      upstream?.destroy();
      client.resetAndDestroy();
    }, 2_000);
    client.once('close', () => clearTimeout(giveUp));
    const attempt = () => {
      const socket = net.connect({ host: opts.target.host, port: opts.target.port, noDelay: true, allowHalfOpen: true });
      upstream = socket;
      socket.once('connect', () => {
        connected = true;
        clearTimeout(giveUp);
        if (client.destroyed) return void socket.destroy();
        track(socket);
        pipe(client, socket);
        pipe(socket, client);
        client.resume();
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        if (connected) return; // a connection's own end reaches the client through pipe()
        if (err.code === 'ECONNREFUSED' && Date.now() < giveUpAt && !client.destroyed) setTimeout(attempt, 50);
        else client.resetAndDestroy();
      });
    };
    attempt();
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, opts.listenHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  const destroy = () => {
    server.close();
    for (const s of sockets) s.destroy();
  };
  return {
    host: opts.listenHost,
    port,
    address: `${opts.listenHost}:${port}`,
    set(o) {
      check(o);
      latency = o.latencyMs;
      jitter = o.jitterMs ?? 0;
    },
    connections: () => sockets.size,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    destroy,
  };
}
