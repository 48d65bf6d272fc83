/**
 * Addresses of the processes the CLI starts: where a process listens (`--listen ADDR[:PORT]`, the
 * bind address) and, for a node, what its peers dial (`--advertise ADDR[:PORT]`, published in the
 * cluster's membership). A node's advertised address defaults to the address of the local interface
 * that routes to the ZooKeeper ensemble, so that a node listening on a wildcard (0.0.0.0) still
 * publishes an address other machines reach; a wildcard is never published, and neither is a
 * loopback address when ZooKeeper is on another machine.
 */
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { UsageError } from './errors.js';
import type { ValueKind } from './settings/kinds.js';

export interface HostPort {
  host: string;
  /** Undefined when the flag named no port. */
  port?: number;
}

/** A resolved listen address and port (0: any free port). */
export interface ListenAddress {
  host: string;
  port: number;
}

const ADDRESS_HELP = 'ADDR[:PORT] (an IPv4 address, a host name or [IPv6], optionally with :PORT)';

/** "10.0.0.5", "10.0.0.5:7400", "node-a.example:7400", "[fd00::5]:7400", "fd00::5" (a bare IPv6 address has no port); throws Error saying why not. */
export function parseHostPort(text: string): HostPort {
  const value = text.trim();
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return withPort(bracketed[1]!, bracketed[2], text);
  if (net.isIPv6(value)) return { host: value };
  const plain = /^([A-Za-z0-9.-]+)(?::(\d+))?$/.exec(value);
  if (!plain || plain[1] === '' || plain[1]!.startsWith('-')) throw new Error(`"${text}" is not ${ADDRESS_HELP}`);
  return withPort(plain[1]!, plain[2], text);
}

function withPort(host: string, port: string | undefined, text: string): HostPort {
  if (port === undefined) return { host };
  const n = Number(port);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`"${text}" has no valid port (0–65535)`);
  return { host, port: n };
}

/** The setting kind of `--listen`/`--advertise`: ADDR[:PORT], decoded to a HostPort. */
export const addressKind: ValueKind = {
  schema: { type: 'string', minLength: 1 },
  what: ADDRESS_HELP,
  decode: (value) => parseHostPort(value as string),
};

/** ADDR or ADDR:PORT as given (brackets around an IPv6 host with a port). */
export function formatAddress(address: HostPort): string {
  return address.port === undefined ? address.host : formatHostPort(address.host, address.port);
}

/** 0.0.0.0 or :: (every interface). */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1' || host === 'localhost' || host === '::ffff:127.0.0.1';
}

/**
 * The local address of the interface that routes to `target`: a UDP socket "connected" to it sends
 * nothing but makes the kernel choose the source address it would use.
 */
export async function localAddressTowards(target: { host: string; port: number }): Promise<string> {
  const { address, family } = await lookup(target.host);
  const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(target.port, address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/** Whether every one of `hosts` is this machine's loopback (a name is resolved first). */
async function allLoopback(hosts: ReadonlyArray<{ host: string }>): Promise<boolean> {
  for (const { host } of hosts) {
    const resolved = isLoopback(host) ? host : await lookup(host).then((r) => r.address, () => host);
    if (!isLoopback(resolved)) return false;
  }
  return true;
}

export interface ListenFlags {
  /** `--listen ADDR[:PORT]` (or the deprecated `--host ADDR`, which sets it). */
  listen?: HostPort;
  /** `--port PORT`, where the command has one. */
  port?: number;
}

/**
 * The bind address of a server from --listen and --port (or another flag naming the port,
 * `portFlag`): a port in --listen and a different one in `portFlag` are refused; `defaults` fill what
 * neither gives.
 */
export function listenAddress(flags: ListenFlags, defaults: { host?: string; port: number }, portFlag = '--port'): { host?: string; port: number } {
  const given = flags.listen;
  if (given?.port !== undefined && flags.port !== undefined && given.port !== flags.port) {
    throw new UsageError(`--listen ${formatAddress(given)} names port ${given.port} and ${portFlag} ${flags.port}: give the port once`);
  }
  const host = given?.host ?? defaults.host;
  return { ...(host !== undefined ? { host } : {}), port: given?.port ?? flags.port ?? defaults.port };
}

export interface NodeAddresses {
  listen: ListenAddress;
  /** What peers dial; its port is undefined when it is the port listened on. */
  advertise: HostPort;
}

/**
 * A node's bind and advertised addresses. `zk` are the ensemble's servers (to find the interface
 * that routes to them). Rules:
 * - --advertise is refused when it is a wildcard, or a loopback address while ZooKeeper is elsewhere;
 * - without --advertise: the --listen address when it names one interface, else the address of the
 *   interface that routes to ZooKeeper;
 * - without --listen: the advertised address (so a node listens on the interface peers reach, and
 *   on loopback when ZooKeeper runs on this machine).
 */
export async function nodeAddresses(flags: ListenFlags & { advertise?: HostPort }, zk: ReadonlyArray<{ host: string; port: number }>): Promise<NodeAddresses> {
  const listen = listenAddress(flags, { port: 0 });
  const zkLocal = await allLoopback(zk);
  const zkNames = zk.map((s) => `${s.host}:${s.port}`).join(',');
  let advertise: HostPort;
  if (flags.advertise !== undefined) {
    advertise = flags.advertise;
    const given = formatAddress(advertise);
    if (isWildcard(advertise.host)) {
      throw new UsageError(`--advertise ${given}: ${advertise.host} is a wildcard, not an address peers can dial; a routable address is needed (this machine's address on the network the other nodes reach it on)`);
    }
    if (advertise.port === 0) throw new UsageError(`--advertise ${given}: port 0 is not a port peers can dial; leave the port out to advertise the one listened on`);
    if (!zkLocal && isLoopback(advertise.host)) {
      throw new UsageError(`--advertise ${given}: a loopback address, but ZooKeeper (${zkNames}) is on another machine, so nodes there could not dial it; a routable address is needed`);
    }
  } else if (listen.host !== undefined && !isWildcard(listen.host)) {
    advertise = { host: listen.host };
    if (!zkLocal && isLoopback(listen.host)) {
      throw new UsageError(`--listen ${listen.host}: a node listening on loopback cannot be dialled by nodes on other machines, and ZooKeeper (${zkNames}) is on another machine; listen on a routable address (or 0.0.0.0 with --advertise ADDR)`);
    }
  } else {
    advertise = { host: await routedAddress(zk, zkNames) };
  }
  return { listen: { host: listen.host ?? advertise.host, port: listen.port }, advertise };
}

/**
 * The address a client command (solve, serve, …) serves the data plane on (code it ships, large
 * inputs and results): loopback while ZooKeeper is on this machine (undefined: the runtime's default),
 * else the address of the interface that routes to ZooKeeper, which the nodes reach too.
 */
export async function clientAddress(zk: ReadonlyArray<{ host: string; port: number }>): Promise<string | undefined> {
  if (zk.length === 0 || await allLoopback(zk)) return undefined;
  // No route at all: connecting will fail and say so, naming the ensemble.
  return routedAddress(zk, '').catch(() => undefined);
}

/** The address of the interface that routes to the first ZooKeeper server it can route to. */
async function routedAddress(zk: ReadonlyArray<{ host: string; port: number }>, zkNames: string): Promise<string> {
  const reasons: string[] = [];
  for (const server of zk) {
    try {
      const address = await localAddressTowards(server);
      if (!isWildcard(address)) return address;
      reasons.push(`${server.host}: no route`);
    } catch (err) {
      reasons.push(`${server.host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  throw new UsageError(`cannot find this machine's address towards ZooKeeper (${zkNames}: ${reasons.join('; ')}); give --advertise ADDR, the address other nodes reach this one at`);
}

/** "host:port" with brackets around an IPv6 host. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** `url` of a server listening on a wildcard, with `host` (an address clients reach) in its place. */
export function reachableUrl(url: string, host: string): string {
  const parsed = new URL(url);
  if (!isWildcard(parsed.hostname.replace(/^\[|\]$/g, ''))) return url;
  parsed.hostname = host.includes(':') ? `[${host}]` : host;
  return url.endsWith('/') ? parsed.href : parsed.href.replace(/\/$/, '');
}
