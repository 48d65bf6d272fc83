/**
 * Test support: several **test hosts** on this machine, each with its own network stack, address
 * and view of the filesystem, so that tests run ZooKeeper servers, `tidepool node`s and clients as
 * on separate machines and break the network between them.
 *
 * - A host is a Linux network namespace (`ip netns`) with one interface, `eth0`, the far end of a
 *   veth pair whose near end is a port of a bridge in the root namespace. The harness owns one /24
 *   of 10.213.0.0/16 per instance (the first X in 10.213.X.0/24 that no interface uses and no other
 *   run holds a lock on): host i is 10.213.X.(i+1), the bridge 10.213.X.254 (where the harness's
 *   own latency proxies listen). Hosts have no default route: they reach each other, the bridge
 *   and nothing else. No address outside that /24 is ever touched.
 * - Every process started in a host runs in that network namespace and in a mount namespace of
 *   its own set up alike for the host (`ip netns exec` gives each process one; the harness mounts
 *   in it): the project is bind-mounted at the host's own install path (`host.installDir`, a
 *   directory under the harness's temporary directory, empty outside that host) and the project's
 *   real path is hidden under an empty tmpfs. So a host's tidepool lives at a path that holds
 *   nothing for any other host or for the test process, and a `file://` URL of one host's
 *   installation cannot resolve on another. Temporary files (os.tmpdir()) are shared, as a shared
 *   file system would be.
 * - Faults: `partition(host)` takes the host's link down (it reaches no one and no one reaches it),
 *   `heal(host)` brings it up; `cut(a, b)` drops every packet between two hosts (nftables, in their
 *   namespaces) and `uncut(a, b)` lifts it; `dropShare(host, percent)` drops that share of the
 *   packets arriving at the host (nftables `numgen random`); `latency(target, ms)` starts a
 *   userspace TCP proxy on the bridge that delays every byte (this kernel has no netem), to be
 *   dialled instead of the target; `host.killAll()` SIGKILLs every process in the host.
 * - Teardown removes the namespaces (killing what runs in them), veths, bridge, nftables tables
 *   (they live in the namespaces), proxies, the subnet lock and the temporary directory: on
 *   `teardown()`, at process exit (synchronously), and at the next harness's start for whatever a
 *   crashed run left (names carry the owning process's pid; a dead owner's are removed).
 *
 * Needs root, iproute2, nftables and util-linux (scripts/ensure-netns.sh installs what is missing).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLatencyProxy, type LatencyProxy, type LatencyOptions } from './latency-proxy.js';

/** The project's root (where package.json is), from the sources or from dist/test/support. */
export const PROJECT_ROOT = [new URL('../../', import.meta.url), new URL('../../../', import.meta.url)]
  .map((u) => fileURLToPath(u).replace(/\/$/, '')).find((dir) => existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'scripts'))) ?? fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

const PREFIX = 'tph';
const SUBNET_FIRST = 10;
const SUBNET_LAST = 250;
const LOCK_DIR = os.tmpdir();

export interface HostsOptions {
  /** Names of the hosts (letters, digits, '-'; up to 16 of them). */
  names: readonly string[];
  /** The directory every host gets its own view of (default: this project). */
  project?: string;
  /**
   * Where hosts see the project: 'own' (default) at an install path of each host's own, its real path
   * hidden; 'project' at its real path, as the test process does. For tests of something other than how
   * code travels whose test process submits the project's test modules by file URL (nodes run files of
   * their installation, and a test module at another path is no file of theirs).
   */
  installs?: 'own' | 'project';
}

export interface HostProcess {
  readonly host: TestHost;
  readonly child: ChildProcess;
  readonly pid: number;
  /**
   * Resolves with the exit code, or the signal's name. A process started in a host does not keep
   * the test process alive by itself (teardown, or the exit hook, kills it); waiting for it does.
   */
  readonly exited: Promise<number | string>;
  readonly exitCode: number | string | undefined;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern` (rejects at the deadline or if the process ends first). */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Calls `listener` with each stderr line from now on, as it arrives (a log record). Returns a function that removes it. */
  onStderrLine(listener: (line: string) => void): () => void;
  kill(signal?: NodeJS.Signals): void;
}

export interface HostNode {
  id: string;
  /** The address it published ("tcp://host:port"). */
  address: string;
  process: HostProcess;
}

/** tsx's loader by absolute URL (it resolves whatever the working directory). */
const TSX = import.meta.resolve('tsx');

export interface SpawnOptions {
  /** Working directory inside the host (default: the host's install directory). */
  cwd?: string;
  /** Added to the environment (the caller's, without TIDEPOOL_* apart from TIDEPOOL_LOG). */
  env?: Record<string, string>;
}

export interface RunResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

// ---------------------------------------------------------------------------------------------
// Shell commands (everything the harness changes goes through `ip` and `nft`)

function sh(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

function shSync(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 }).toString();
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The environment of processes in hosts: the caller's without its TIDEPOOL_* settings (TIDEPOOL_LOG apart). */
function hostEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIDEPOOL_') || k === 'TIDEPOOL_LOG') env[k] = v;
  return { ...env, TIDEPOOL_LOG: process.env.TIDEPOOL_LOG ?? 'warn', ...extra };
}

let ensured = false;

/** Runs scripts/ensure-netns.sh once per process (root, iproute2, nftables). */
function ensureTools(): void {
  if (ensured) return;
  try {
    execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts/ensure-netns.sh')], { stdio: ['ignore', 'inherit', 'pipe'], timeout: 15 * 60_000 });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`test hosts cannot be created here: ${stderr || (err as Error).message}`);
  }
  ensured = true;
}

// ---------------------------------------------------------------------------------------------
// What a crashed run left behind

/** Removes namespaces, links, subnet locks and directories of harness runs whose process is gone. */
export function removeStaleHosts(): string[] {
  const removed: string[] = [];
  const deadOwner = (name: string, re: RegExp) => {
    const m = re.exec(name);
    return m !== null && !alive(Number(m[1]));
  };
  for (const line of shSync('ip', ['netns', 'list']).split('\n')) {
    const ns = line.split(' ')[0]!;
    if (!deadOwner(ns, /^tph-(\d+)[a-z]-/)) continue;
    killNamespaceSync(ns);
    shSync('ip', ['netns', 'del', ns]);
    removed.push(`netns ${ns}`);
  }
  for (const line of shSync('ip', ['-o', 'link', 'show']).split('\n')) {
    const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
    if (!name || !deadOwner(name, /^tph(\d+)[a-z](?:br|v\d+)$/)) continue;
    shSync('ip', ['link', 'del', name]);
    removed.push(`link ${name}`);
  }
  for (const name of readdirSync(LOCK_DIR)) {
    const lock = /^tph-subnet-(\d+)\.lock$/.exec(name);
    if (lock) {
      const owner = Number(readFileSafe(path.join(LOCK_DIR, name)).trim());
      if (!Number.isInteger(owner) || !alive(owner)) {
        rmSync(path.join(LOCK_DIR, name), { force: true });
        removed.push(`lock ${name}`);
      }
    } else if (deadOwner(name, /^tph-(\d+)[a-z]$/)) {
      rmSync(path.join(LOCK_DIR, name), { recursive: true, force: true });
      removed.push(`dir ${name}`);
    }
  }
  return removed;
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function killNamespaceSync(ns: string): void {
  for (const pid of shSync('ip', ['netns', 'pids', ns]).split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** Takes the first free 10.213.X.0/24: not on any interface, and locked for this process. */
function claimSubnet(): { octet: number; lock: string } {
  const used = shSync('ip', ['-o', '-4', 'addr', 'show']);
  for (let x = SUBNET_FIRST; x <= SUBNET_LAST; x++) {
    if (used.includes(` 10.213.${x}.`)) continue;
    const lock = path.join(LOCK_DIR, `tph-subnet-${x}.lock`);
    let fd: number;
    try {
      fd = openSync(lock, 'wx', 0o644);
    } catch {
      continue; // another live run holds it
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return { octet: x, lock };
  }
  throw new Error(`no free subnet in 10.213.${SUBNET_FIRST}-${SUBNET_LAST}.0/24 for test hosts (locks in ${LOCK_DIR}/tph-subnet-*.lock)`);
}

// ---------------------------------------------------------------------------------------------
// Live instances, torn down at exit whatever happens

const live = new Set<TestHosts>();
let exitHook = false;
let instances = 0;

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const hosts of live) hosts.teardownSync();
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      for (const hosts of live) hosts.teardownSync();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

// ---------------------------------------------------------------------------------------------

interface FilterState {
  /** Addresses whose packets this host drops (both ways). */
  cutFrom: Set<string>;
  /** Share of arriving packets dropped (0–100). */
  lossPercent: number;
}

export class TestHost {
  /** Processes started in this host and not yet reaped. */
  readonly processes = new Set<HostProcess>();
  readonly filter: FilterState = { cutFrom: new Set(), lossPercent: 0 };

  constructor(
    readonly hosts: TestHosts,
    readonly name: string,
    readonly index: number,
    /** The host's IPv4 address. */
    readonly address: string,
    /** Its network namespace. */
    readonly ns: string,
    /** Its veth's end on the bridge (root namespace). */
    readonly link: string,
    /** Where the project is in this host's view (nothing there for anyone else). */
    readonly installDir: string,
  ) {}

  /** `tidepool` as installed on this host. */
  get tidepoolBin(): string {
    return path.join(this.installDir, 'bin', 'tidepool.mjs');
  }

  /**
   * `tidepool` from this host's sources under tsx, as a command: it runs TypeScript task modules (the
   * project's test apps named by file URL), in its worker threads too.
   */
  get tidepoolFromSources(): string[] {
    return [process.execPath, '--import', TSX, path.join(this.installDir, 'src', 'cli', 'run.ts')];
  }

  /** A directory of this host's own under the shared temporary directory. */
  dir(...parts: string[]): string {
    const dir = path.join(this.hosts.baseDir, 'data', this.name, ...parts);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Starts `command args` in this host (its network, its view of the filesystem). */
  spawn(command: string, args: readonly string[], opts: SpawnOptions = {}): HostProcess {
    if (this.hosts.closed) throw new Error(`test hosts are torn down; cannot start ${command} on ${this.name}`);
    // `ip netns exec` gives the process its own mount namespace (slave of the root's): the mounts
    // below stay in it. The project appears at installDir and its real path shows an empty tmpfs.
    // (With installs 'project' the two are one path and nothing is mounted.)
    const script = '{ [ "$1" = "$2" ] || { mount --bind "$1" "$2" && mount -t tmpfs -o size=64k,mode=0755 hidden "$1"; }; } && cd "$3" && shift 3 && exec "$@"';
    const child = spawn('ip', ['netns', 'exec', this.ns, 'sh', '-c', script, 'sh', this.hosts.project, this.installDir, opts.cwd ?? this.installDir, command, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: hostEnv(opts.env),
    });
    let out = '';
    let err = '';
    const waiters = new Set<() => void>();
    // Unreferenced unless someone waits for it (`exited`, `line`, `run`).
    const handles = [child, child.stdout!, child.stderr!] as Array<{ ref(): unknown; unref(): unknown }>;
    let holds = 0;
    const hold = <T>(p: Promise<T>): Promise<T> => {
      if (holds++ === 0) handles.forEach((h) => h.ref());
      return p.finally(() => {
        if (--holds === 0) handles.forEach((h) => h.unref());
      });
    };
    handles.forEach((h) => h.unref());
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of waiters) w();
    });
    const errListeners = new Set<(line: string) => void>();
    let errPartial = '';
    child.stderr!.on('data', (d: Buffer) => {
      const text = d.toString();
      err += text;
      if (errListeners.size === 0) return;
      const lines = (errPartial + text).split('\n');
      errPartial = lines.pop()!;
      for (const l of lines) for (const listener of errListeners) listener(l);
    });
    let code: number | string | undefined;
    const ended = new Promise<number | string>((resolve) => {
      child.once('exit', (c, signal) => {
        code = c ?? signal ?? 'unknown';
        this.processes.delete(proc);
        for (const w of waiters) w();
        resolve(code);
      });
      child.once('error', (e) => {
        err += `\n${e.message}`;
        code = 'spawn-error';
        this.processes.delete(proc);
        resolve(code);
      });
    });
    const hostName = this.name;
    const proc: HostProcess = {
      host: this,
      child,
      pid: child.pid ?? -1,
      get exited() {
        return hold(ended);
      },
      get exitCode() {
        return code;
      },
      stdout: () => out,
      stderr: () => err,
      onStderrLine(listener) {
        if (errListeners.size === 0) errPartial = err.slice(err.lastIndexOf('\n') + 1); // a line begun before: completed from here
        errListeners.add(listener);
        return () => errListeners.delete(listener);
      },
      line(pattern, timeoutMs = 60_000) {
        return hold(new Promise((resolve, reject) => {
          const check = () => {
            const found = out.split('\n').find((l) => pattern.test(l));
            if (found !== undefined) return done(() => resolve(found));
            if (code !== undefined) done(() => reject(new Error(`${command} on ${hostName} ended (${code}) before printing ${pattern}; stdout:\n${out}\nstderr:\n${err}`)));
          };
          const timer = setTimeout(() => done(() => reject(new Error(`${command} on ${hostName} printed no line matching ${pattern} within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`))), timeoutMs);
          const done = (settle: () => void) => {
            clearTimeout(timer);
            waiters.delete(check);
            settle();
          };
          waiters.add(check);
          check();
        }));
      },
      kill(signal = 'SIGKILL') {
        if (code === undefined) child.kill(signal);
      },
    };
    this.processes.add(proc);
    return proc;
  }

  /** Runs `command` in this host to its end (killed and rejected at the deadline). */
  async run(command: string, args: readonly string[], opts: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
    const proc = this.spawn(command, args, opts);
    const timeoutMs = opts.timeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`${command} ${args.join(' ')} on ${this.name} did not end within ${timeoutMs} ms; stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`));
      }, timeoutMs);
    });
    try {
      const code = await Promise.race([proc.exited, deadline]);
      return { code, stdout: proc.stdout(), stderr: proc.stderr() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Starts this host's `tidepool` with `args`. */
  tidepool(args: readonly string[], opts: SpawnOptions = {}): HostProcess {
    return this.spawn(process.execPath, [this.tidepoolBin, ...args], opts);
  }

  /** Runs this host's `tidepool` with `args` to its end. */
  runTidepool(args: readonly string[], opts: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
    return this.run(process.execPath, [this.tidepoolBin, ...args], opts);
  }

  /**
   * Starts this host's `tidepool node` (listening on the host's address, port 7400 unless `extraArgs`
   * say otherwise; with `typescript`, from the sources, able to run TypeScript task modules) and resolves once it printed its ready line.
   */
  async startNode(opts: { zk: string; secretFile: string; workers?: number; id?: string; extraArgs?: readonly string[]; env?: Record<string, string>; timeoutMs?: number; typescript?: boolean }): Promise<HostNode> {
    const args = ['node', '--zk', opts.zk, '--secret-file', opts.secretFile, '--workers', String(opts.workers ?? 1), '--json', ...(opts.id ? ['--id', opts.id] : []), ...(opts.extraArgs ?? [])];
    const [program, ...pre] = opts.typescript ? this.tidepoolFromSources : [process.execPath, this.tidepoolBin];
    const proc = this.spawn(program!, [...pre, ...args], opts.env ? { env: opts.env } : {});
    const ready = JSON.parse(await proc.line(/^\{/, opts.timeoutMs ?? 60_000)) as { node: string; address: string };
    return { id: ready.node, address: ready.address, process: proc };
  }

  /** Pids of every process in this host's network namespace. */
  async pids(): Promise<number[]> {
    return (await sh('ip', ['netns', 'pids', this.ns])).split(/\s+/).filter(Boolean).map(Number);
  }

  /** SIGKILLs every process in this host (its own and any they started) and waits for the ones it started. */
  async killAll(): Promise<void> {
    for (const pid of await this.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await Promise.all([...this.processes].map((p) => p.exited));
  }

  /** Rewrites this host's nftables table from its filter state (one atomic transaction). */
  async applyFilter(): Promise<void> {
    const cut = [...this.filter.cutFrom];
    const input = [
      ...(cut.length ? [`ip saddr { ${cut.join(', ')} } drop`] : []),
      ...(this.filter.lossPercent >= 100 ? ['drop'] : this.filter.lossPercent > 0 ? [`numgen random mod 100 < ${this.filter.lossPercent} drop`] : []),
    ];
    const output = cut.length ? [`ip daddr { ${cut.join(', ')} } drop`] : [];
    const script = [
      'table inet tph {}',
      'delete table inet tph',
      'table inet tph {',
      '  chain input {',
      '    type filter hook input priority 0; policy accept;',
      ...input.map((rule) => `    ${rule}`),
      '  }',
      '  chain output {',
      '    type filter hook output priority 0; policy accept;',
      ...output.map((rule) => `    ${rule}`),
      '  }',
      '}',
      '',
    ].join('\n');
    await sh('ip', ['netns', 'exec', this.ns, 'nft', '-f', '-'], script);
  }
}

/** N test hosts on a bridge; see the file's comment. */
export class TestHosts {
  readonly hosts: TestHost[] = [];
  /** The bridge's address (the root namespace's on the hosts' network): where proxies listen. */
  readonly bridgeAddress: string;
  closed = false;
  private readonly proxies = new Set<LatencyProxy>();

  private constructor(
    readonly id: string,
    readonly octet: number,
    private readonly lock: string,
    readonly baseDir: string,
    readonly project: string,
  ) {
    this.bridgeAddress = `10.213.${octet}.254`;
  }

  get bridge(): string {
    return `${PREFIX}${this.id}br`;
  }

  static async create(opts: HostsOptions): Promise<TestHosts> {
    const names = [...opts.names];
    if (names.length === 0 || names.length > 16) throw new Error(`test hosts: give 1 to 16 names, got ${names.length}`);
    for (const n of names) if (!/^[a-z][a-z0-9-]{0,15}$/.test(n)) throw new Error(`test hosts: bad host name "${n}" (lower-case letters, digits, '-')`);
    if (new Set(names).size !== names.length) throw new Error(`test hosts: names repeat: ${names.join(', ')}`);
    ensureTools();
    removeStaleHosts();
    installExitHook();
    const id = `${process.pid}${String.fromCharCode(97 + (instances++ % 26))}`;
    const { octet, lock } = claimSubnet();
    const baseDir = path.join(LOCK_DIR, `tph-${id}`);
    const hosts = new TestHosts(id, octet, lock, baseDir, opts.project ?? PROJECT_ROOT);
    live.add(hosts);
    try {
      mkdirSync(path.join(baseDir, 'mnt'), { recursive: true });
      await sh('ip', ['link', 'add', hosts.bridge, 'type', 'bridge', 'forward_delay', '0', 'stp_state', '0']);
      await sh('ip', ['addr', 'add', `${hosts.bridgeAddress}/24`, 'dev', hosts.bridge]);
      await sh('ip', ['link', 'set', hosts.bridge, 'up']);
      for (const [i, name] of names.entries()) {
        const ns = `${PREFIX}-${id}-${name}`;
        const link = `${PREFIX}${id}v${i}`;
        const installDir = opts.installs === 'project' ? hosts.project : path.join(baseDir, 'mnt', name);
        mkdirSync(installDir, { recursive: true });
        const host = new TestHost(hosts, name, i, `10.213.${octet}.${i + 1}`, ns, link, installDir);
        await sh('ip', ['netns', 'add', ns]);
        await sh('ip', ['link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
        await sh('ip', ['link', 'set', link, 'master', hosts.bridge, 'up']);
        await sh('ip', ['-n', ns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
        await sh('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
        await sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
        hosts.hosts.push(host);
      }
    } catch (err) {
      await hosts.teardown();
      throw err;
    }
    return hosts;
  }

  host(name: string): TestHost {
    const host = this.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`no test host "${name}" (have ${this.hosts.map((h) => h.name).join(', ')})`);
    return host;
  }

  /** Cuts `host` off from every other host and the bridge (its link goes down). */
  async partition(host: TestHost): Promise<void> {
    await sh('ip', ['link', 'set', host.link, 'down']);
  }

  /** Ends a partition: the link comes back up. */
  async heal(host: TestHost): Promise<void> {
    await sh('ip', ['link', 'set', host.link, 'up']);
  }

  /** Drops every packet between `a` and `b`, both ways (others still reach both). */
  async cut(a: TestHost, b: TestHost): Promise<void> {
    a.filter.cutFrom.add(b.address);
    b.filter.cutFrom.add(a.address);
    await Promise.all([a.applyFilter(), b.applyFilter()]);
  }

  async uncut(a: TestHost, b: TestHost): Promise<void> {
    a.filter.cutFrom.delete(b.address);
    b.filter.cutFrom.delete(a.address);
    await Promise.all([a.applyFilter(), b.applyFilter()]);
  }

  /** Drops `percent` % of the packets arriving at `host`, at random (0 stops dropping). */
  async dropShare(host: TestHost, percent: number): Promise<void> {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw new Error(`dropShare: percent must be a whole number 0–100, got ${percent}`);
    host.filter.lossPercent = percent;
    await host.applyFilter();
  }

  /**
   * A TCP proxy on the bridge that delays each byte by `latencyMs` (± `jitterMs`) each way before
   * passing it to `target`: dial `proxy.host:proxy.port` instead of the target to add latency.
   */
  async latency(target: { host: string; port: number }, opts: LatencyOptions): Promise<LatencyProxy> {
    const proxy = await startLatencyProxy({ listenHost: this.bridgeAddress, target, ...opts });
    this.proxies.add(proxy);
    return proxy;
  }

  /** Removes everything this instance created; idempotent. */
  async teardown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.proxies].map((p) => p.close()));
    for (const host of this.hosts) await host.killAll().catch(() => undefined);
    this.teardownSync();
  }

  /** The synchronous part of teardown (also what runs at process exit). */
  teardownSync(): void {
    this.closed = true;
    for (const proxy of this.proxies) proxy.destroy();
    for (const host of this.hosts) {
      killNamespaceSync(host.ns);
      shSync('ip', ['netns', 'del', host.ns]);
      shSync('ip', ['link', 'del', host.link]);
    }
    shSync('ip', ['link', 'del', this.bridge]);
    rmSync(this.baseDir, { recursive: true, force: true });
    rmSync(this.lock, { force: true });
    live.delete(this);
  }

  /** What of this instance still exists (for the self-test: empty after teardown). */
  leftovers(): string[] {
    const found: string[] = [];
    const namespaces = shSync('ip', ['netns', 'list']);
    for (const host of this.hosts) if (namespaces.split('\n').some((l) => l.split(' ')[0] === host.ns)) found.push(`netns ${host.ns}`);
    const links = shSync('ip', ['-o', 'link', 'show']);
    for (const name of [this.bridge, ...this.hosts.map((h) => h.link)]) if (new RegExp(`^\\d+:\\s+${name}[@:]`, 'm').test(links)) found.push(`link ${name}`);
    if (shSync('ip', ['-o', '-4', 'addr', 'show']).includes(` 10.213.${this.octet}.`)) found.push(`address 10.213.${this.octet}.0/24`);
    if (existsSync(this.baseDir)) found.push(`dir ${this.baseDir}`);
    if (existsSync(this.lock)) found.push(`lock ${this.lock}`);
    return found;
  }
}
