/**
 * Test support: a real ZooKeeper ensemble (Debian's zookeeper 3.8 package) on loopback,
 * one JVM per server, with handles to stop, kill and restart single servers.
 *
 * Every child JVM is killed when the test process exits, and the JVMs are unref'd so a
 * forgotten ensemble never keeps a test file alive on its own.
 */
import { log4jProperties } from '../../src/cli/local-cluster/zookeeper-server.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../src/util/free-ports.js';

export interface ZkServerHandle {
  /** The server's myid (1-based). */
  id: number;
  clientPort: number;
  /** True while the JVM process is alive (not necessarily serving yet). */
  readonly running: boolean;
  /** Pid of the current JVM, undefined when never started or spawning failed. */
  readonly pid: number | undefined;
  /** The server's own log file (log4j, INFO and up). */
  readonly logFile: string;
  /** SIGTERM, then wait for the JVM to exit (escalates to SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL, then wait for the JVM to exit. */
  kill(): Promise<void>;
  /** Restart with the same config and data dir; resolves once the server serves (needs a quorum). */
  start(): Promise<void>;
}

export interface ZkEnsemble {
  /** "zk://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3" */
  connectionString: string;
  /** "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3" */
  hosts: string;
  servers: ZkServerHandle[];
  /** The server that is leader right now (asks each running server `srvr`); throws if there is not exactly one. */
  leader(): Promise<ZkServerHandle>;
  /** Resolves once every started server serves and exactly one of them leads; fails fast if one has died. */
  waitForQuorum(timeoutMs?: number): Promise<void>;
  /** SIGKILL every server and remove the data dirs. Idempotent. */
  stop(): Promise<void>;
}

export interface EnsembleOptions {
  size?: number;
  tickTime?: number;
  minSessionTimeout?: number;
  maxSessionTimeout?: number;
  /** Deadline for startup, restarts and waitForQuorum (default 60 s). */
  timeoutMs?: number;
  /** Each server's JVM heap (MiB; default 128): a bench that records a million znodes needs more. */
  heapMb?: number;
  /**
   * Serve TLS only: each server's client port is a `secureClientPort` (Netty), there is no plaintext
   * client port; `config` holds the `ssl.*` lines of zoo.cfg (key and trust stores), `probe` the TLS
   * options the readiness probe connects with (its trust, and a client certificate if the server needs one).
   */
  tls?: { config: string[]; probe: tls.ConnectionOptions };
}

type EnsembleSettings = Required<Omit<EnsembleOptions, 'tls'>> & Pick<EnsembleOptions, 'tls'>;

const JAVA_DIR = '/usr/share/java';
const ZK_JAR = path.join(JAVA_DIR, 'zookeeper.jar');
/** The project's script, found from the sources (test/support) or from a built copy (dist/test/support). */
const ENSURE_SCRIPT = [new URL('../../scripts/ensure-zookeeper.sh', import.meta.url), new URL('../../../scripts/ensure-zookeeper.sh', import.meta.url)]
  .map((u) => fileURLToPath(u)).find((p) => existsSync(p)) ?? fileURLToPath(new URL('../../scripts/ensure-zookeeper.sh', import.meta.url));
const POLL_MS = 100;
const PROBE_TIMEOUT_MS = 1_000;
const STOP_ESCALATE_MS = 10_000;
const SERVING_MODES = new Set(['leader', 'follower', 'standalone']);

/** Small and quick JVMs: the machine has 2 cores and runs several servers plus the tests. */
const JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto', '-XX:-UsePerfData'];

/**
 * zookeeper.jar's manifest brings its own dependencies. The logging binding is named
 * explicitly: "/usr/share/java/*" holds six SLF4J bindings and the JVM picks one by
 * directory order (slf4j-nop here, i.e. no log at all). Debian's 3.8 logs through log4j 1.2.
 */
function classPath(): string {
  // Netty's TLS handler (secureClientPort) needs netty-codec, which zookeeper.jar's manifest does not list (Debian 12).
  const netty = [path.join(JAVA_DIR, 'netty-codec.jar')].filter((jar) => existsSync(jar));
  const log4j = [path.join(JAVA_DIR, 'slf4j-log4j12.jar'), path.join(JAVA_DIR, 'log4j-1.2.jar')];
  if (log4j.every((jar) => existsSync(jar))) return [ZK_JAR, ...netty, ...log4j].join(':');
  return `${ZK_JAR}:${JAVA_DIR}/*`;
}

// ---------------------------------------------------------------------------------------------
// Child processes must never outlive the test process.

const liveChildren = new Set<ChildProcess>();
const liveRoots = new Set<string>();
let cleanupInstalled = false;

function killEverythingNow(): void {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const root of liveRoots) {
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // best effort: a dying JVM may still hold files
    }
  }
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', killEverythingNow);
  // A signal's default action skips 'exit' handlers: clean up, then re-raise it unless
  // someone else (e.g. the test runner) handles the signal.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killEverythingNow();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

let ensured: Promise<void> | undefined;

/** Runs scripts/ensure-zookeeper.sh once per process, so tests work on a fresh machine. */
function ensureZooKeeperInstalled(): Promise<void> {
  ensured ??= new Promise<void>((resolve, reject) => {
    execFile('bash', [ENSURE_SCRIPT], { timeout: 15 * 60_000 }, (err, stdout, stderr) => {
      if (stdout.trim()) process.stderr.write(stdout);
      if (err) reject(new Error(`${ENSURE_SCRIPT} failed: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
  return ensured;
}

export { freePorts };

/** Sends a ZooKeeper four-letter word (ruok, srvr, mntr, ...) and returns the whole answer; over TLS with `secure`. */
export function fourLetterWord(port: number, word: string, timeoutMs = PROBE_TIMEOUT_MS, secure?: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = secure ? tls.connect({ ...secure, host: '127.0.0.1', port }) : net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => socket.destroy(new Error(`'${word}' on 127.0.0.1:${port}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    // Plain write, not end(): the server answers and then closes the connection itself.
    socket.on(secure ? 'secureConnect' : 'connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The last `lines` lines of a file, read from its end; '' when it does not exist. */
async function tail(file: string, lines = 25): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------------------------------------
// One server

interface Proc {
  child: ChildProcess;
  alive: boolean;
  exit: string;
  done: Promise<void>;
}

class ZkServer implements ZkServerHandle {
  /** Whether the test wants this server up: a server that is wanted but dead has crashed. */
  wanted = false;
  /** What the last probe saw, for error messages. */
  lastSeen = 'not probed';
  private proc: Proc | undefined;

  constructor(
    readonly id: number,
    readonly clientPort: number,
    private readonly dir: string,
    private readonly readyTimeoutMs: number,
    private readonly heapMb: number,
    private readonly probeTls?: tls.ConnectionOptions,
  ) {}

  get running(): boolean {
    return this.proc?.alive ?? false;
  }

  get pid(): number | undefined {
    return this.proc?.child.pid;
  }

  get logFile(): string {
    return path.join(this.dir, 'zookeeper.log');
  }

  private get stdoutFile(): string {
    return path.join(this.dir, 'stdout.log');
  }

  spawn(): void {
    this.wanted = true;
    if (this.running) return;
    installCleanup();
    const args = [
      `-Xmx${this.heapMb}m`,
      ...JVM_FLAGS,
      `-Dlog4j.configuration=file:${path.join(this.dir, 'log4j.properties')}`,
      // Also honoured by Debian's stock log4j.properties, should ours not be picked up.
      `-Dzookeeper.log.dir=${this.dir}`,
      '-Dzookeeper.root.logger=INFO,ROLLINGFILE',
      '-Dzookeeper.jmx.log4j.disable=true',
      '-cp',
      classPath(),
      'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      path.join(this.dir, 'zoo.cfg'),
    ];
    // stdout/stderr go straight to a file: no pipes to drain, and JVM crashes stay readable.
    const out = openSync(this.stdoutFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn('java', args, { cwd: this.dir, stdio: ['ignore', out, out], detached: false });
    } finally {
      closeSync(out);
    }
    const proc: Proc = { child, alive: true, exit: '', done: Promise.resolve() };
    proc.done = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        proc.alive = false;
        proc.exit = signal ? `killed by ${signal}` : `exited with code ${code}`;
        liveChildren.delete(child);
        resolve();
      });
      child.once('error', (err) => {
        if (child.pid !== undefined) return; // signalling errors; the 'exit' event still comes
        proc.alive = false;
        proc.exit = `could not be spawned: ${err.message}`;
        resolve();
      });
    });
    if (child.pid !== undefined) liveChildren.add(child);
    child.unref(); // only waits for its exit (stop/kill) hold the event loop open
    this.proc = proc;
  }

  async start(): Promise<void> {
    this.spawn();
    await pollUntil(
      `ZooKeeper server ${this.id} serving`,
      this.readyTimeoutMs,
      async () => {
        this.assertAlive();
        return SERVING_MODES.has((await this.mode()) ?? '');
      },
      () => this.describe(),
    );
  }

  stop(): Promise<void> {
    return this.terminate('SIGTERM');
  }

  kill(): Promise<void> {
    return this.terminate('SIGKILL');
  }

  private async terminate(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    this.wanted = false;
    const proc = this.proc;
    if (!proc?.alive) return;
    proc.child.ref(); // keep the test process alive until the JVM is really gone
    proc.child.kill(signal);
    const escalate = setTimeout(() => proc.child.kill('SIGKILL'), STOP_ESCALATE_MS);
    await proc.done;
    clearTimeout(escalate);
  }

  /** 'leader' | 'follower' | 'standalone' while serving, undefined otherwise. */
  async mode(): Promise<string | undefined> {
    if (!this.running) {
      this.lastSeen = 'not running';
      return undefined;
    }
    try {
      const answer = await fourLetterWord(this.clientPort, 'srvr', PROBE_TIMEOUT_MS, this.probeTls);
      const mode = /^Mode: (\w+)/m.exec(answer)?.[1];
      this.lastSeen = mode ? `mode ${mode}` : answer.trim() || 'empty srvr answer';
      return mode;
    } catch (err) {
      this.lastSeen = (err as Error).message;
      return undefined;
    }
  }

  /** Throws, with the log tail, if the server should be up but its JVM has died. */
  assertAlive(): void {
    if (this.wanted && !this.running) {
      throw new Error(`ZooKeeper server ${this.id} ${this.proc?.exit ?? 'never started'}; see ${this.logFile}`);
    }
  }

  async describe(): Promise<string> {
    const log = await tail(this.logFile);
    const stdout = await tail(this.stdoutFile, 10);
    return [
      `server ${this.id} (127.0.0.1:${this.clientPort}, pid ${this.pid ?? '-'}): ${this.lastSeen}`,
      log && `--- tail of ${this.logFile}\n${log}`,
      stdout && `--- tail of ${this.stdoutFile}\n${stdout}`,
    ]
      .filter(Boolean)
      .join('\n');
  }
}

/** Polls `check` every POLL_MS until it is true, failing with `diagnose()` at the deadline. */
async function pollUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  diagnose: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) {
      throw new Error(`${what}: not reached within ${timeoutMs} ms\n${await diagnose()}`);
    }
    await delay(POLL_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// The ensemble

function zooCfg(opts: EnsembleSettings, dataDir: string, clientPort: number, peers: string[]): string {
  const lines = [
    `tickTime=${opts.tickTime}`,
    'initLimit=10',
    'syncLimit=5',
    `dataDir=${dataDir}`,
    ...(opts.tls ? [
      `secureClientPort=${clientPort}`,
      'secureClientPortAddress=127.0.0.1',
      'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
      ...opts.tls.config,
    ] : [`clientPort=${clientPort}`, 'clientPortAddress=127.0.0.1']),
    ...peers,
    ...(opts.size > 1 ? ['standaloneEnabled=false'] : []),
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    'maxClientCnxns=0',
    'autopurge.purgeInterval=0',
    `minSessionTimeout=${opts.minSessionTimeout}`,
    `maxSessionTimeout=${opts.maxSessionTimeout}`,
    // Test data is disposable: skip fsync (a killed JVM loses nothing, the page cache keeps it)
    // and the 64 MB transaction-log preallocation.
    'forceSync=no',
    'preAllocSize=1024',
  ];
  return `${lines.join('\n')}\n`;
}


export async function startEnsemble(options: EnsembleOptions = {}): Promise<ZkEnsemble> {
  const tickTime = options.tickTime ?? 200;
  const opts: EnsembleSettings = {
    size: options.size ?? 3,
    tickTime,
    minSessionTimeout: options.minSessionTimeout ?? tickTime * 2,
    maxSessionTimeout: options.maxSessionTimeout ?? 60_000,
    timeoutMs: options.timeoutMs ?? 60_000,
    heapMb: options.heapMb ?? 128,
    ...(options.tls ? { tls: options.tls } : {}),
  };
  if (!Number.isInteger(opts.size) || opts.size < 1) throw new Error(`ensemble size must be >= 1, got ${opts.size}`);

  await ensureZooKeeperInstalled();
  installCleanup();
  const root = await mkdtemp(path.join(os.tmpdir(), 'tidepool-zk-'));
  liveRoots.add(root);

  const ports = await freePorts(opts.size * 3);
  const ids = Array.from({ length: opts.size }, (_, i) => i + 1);
  const clientPort = (id: number) => ports[(id - 1) * 3]!;
  // A single server runs standalone; a quorum needs the server.N lines.
  const peers =
    opts.size > 1 ? ids.map((id) => `server.${id}=127.0.0.1:${ports[(id - 1) * 3 + 1]}:${ports[(id - 1) * 3 + 2]}`) : [];

  const servers: ZkServer[] = [];
  for (const id of ids) {
    const dir = path.join(root, `server-${id}`);
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'myid'), `${id}\n`);
    await writeFile(path.join(dir, 'zoo.cfg'), zooCfg(opts, dataDir, clientPort(id), peers));
    await writeFile(path.join(dir, 'log4j.properties'), log4jProperties(path.join(dir, 'zookeeper.log')));
    servers.push(new ZkServer(id, clientPort(id), dir, opts.timeoutMs, opts.heapMb, opts.tls?.probe));
  }

  const hosts = servers.map((s) => `127.0.0.1:${s.clientPort}`).join(',');
  let stopping: Promise<void> | undefined;

  const ensemble: ZkEnsemble = {
    connectionString: `zk://${hosts}`,
    hosts,
    servers,

    async leader() {
      const running = servers.filter((s) => s.running);
      const modes = await Promise.all(running.map((s) => s.mode()));
      const leaders = running.filter((_, i) => modes[i] === 'leader' || modes[i] === 'standalone');
      if (leaders.length !== 1) {
        const seen = servers.map((s) => `server ${s.id}: ${s.lastSeen}`).join('; ');
        throw new Error(`expected exactly one ZooKeeper leader, found ${leaders.length} (${seen})`);
      }
      return leaders[0]!;
    },

    async waitForQuorum(timeoutMs = opts.timeoutMs) {
      const majority = Math.floor(opts.size / 2) + 1;
      await pollUntil(
        `ZooKeeper quorum of ${servers.filter((s) => s.wanted).length}/${opts.size}`,
        timeoutMs,
        async () => {
          const wanted = servers.filter((s) => s.wanted);
          wanted.forEach((s) => s.assertAlive());
          if (wanted.length < majority) {
            throw new Error(`only ${wanted.length} of ${opts.size} ZooKeeper servers are started; a quorum needs ${majority}`);
          }
          const modes = await Promise.all(wanted.map((s) => s.mode()));
          if (!modes.every((m) => m !== undefined && SERVING_MODES.has(m))) return false;
          return opts.size === 1 || modes.filter((m) => m === 'leader').length === 1;
        },
        async () => (await Promise.all(servers.map((s) => s.describe()))).join('\n\n'),
      );
    },

    stop() {
      stopping ??= (async () => {
        await Promise.all(servers.map((s) => s.kill()));
        await rm(root, { recursive: true, force: true, maxRetries: 3 });
        liveRoots.delete(root);
      })();
      return stopping;
    },
  };

  try {
    servers.forEach((s) => s.spawn());
    await ensemble.waitForQuorum();
  } catch (err) {
    await ensemble.stop();
    throw err;
  }
  return ensemble;
}
