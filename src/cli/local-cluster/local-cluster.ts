/**
 * A whole cluster on this machine for `tidepool up`: a ZooKeeper ensemble (Debian's package), N
 * `tidepool node`s (the local node provider), and the monitor with its dashboard, all as processes of
 * their own (each in its own process group: a Ctrl-C reaches only `tidepool up`, which then stops
 * them in order: nodes drain first, then the monitor, then ZooKeeper). What runs is written to
 * `<dir>/cluster.json` as soon as it starts, so that `tidepool down` stops it all, even after
 * `tidepool up` itself was killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { connect } from '../../coord/connect.js';
import type { CoordClient } from '../../coord/types.js';
import { ClusterSecret } from '../../util/cluster-secret.js';
import { freePorts } from '../../util/free-ports.js';
import { installedTidepool, LocalDriver } from '../../runtime/providers/local-driver.js';
import { Provisioner } from '../../runtime/providers/provisioner.js';
import { log4jProperties, SERVING_MODES, serverMode, zooCfg, zookeeperJavaArgs, zookeeperMissing } from './zookeeper-server.js';

export interface LocalClusterOptions {
  dir: string;
  nodes: number;
  zkServers: number;
  /** Worker threads per node. */
  workers: number;
  /** Dashboard port (0: any free port). */
  dashboardPort: number;
  /** Deadline for each step (ZooKeeper quorum, nodes joining, the monitor). */
  timeoutMs?: number;
}

/** What `<dir>/cluster.json` holds. */
export interface ClusterRecord {
  /** The `tidepool up` process. */
  pid: number;
  dir: string;
  /** The ensemble as --zk takes it: host:port[,host:port…]. */
  zk: string;
  secretFile: string;
  dashboard?: string;
  zookeeper: Array<{ id: number; pid: number; port: number }>;
  nodes: Array<{ id: string; pid: number }>;
  monitor?: { pid: number };
}

export function recordFile(dir: string): string {
  return path.join(dir, 'cluster.json');
}

export function readRecord(dir: string): ClusterRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordFile(dir), 'utf8')) as ClusterRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${recordFile(dir)}: ${(err as Error).message}`);
  }
}

/** Whether `pid` runs (a zombie, ended but not yet reaped by its parent, does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch (err) {
    // Gone meanwhile; or no /proc on this system, where kill(0) is all there is.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' || !existsSync('/proc/self');
  }
}

/** Whether `pid` still runs the program recorded (its command line holds `marker`); where /proc is missing, only whether it runs. */
export function runs(pid: number, marker: string): boolean {
  if (!alive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(marker);
  } catch {
    return !existsSync('/proc/self');
  }
}

/** Waits for `check` (polled), failing with `what` at the deadline. */
async function until(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await delay(100);
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once it has ended. */
async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(kill);
}

export class LocalCluster {
  readonly record: ClusterRecord;
  private readonly zookeeper: ChildProcess[] = [];
  private monitor: ChildProcess | undefined;
  private provider: Provisioner | undefined;
  private driver: LocalDriver | undefined;
  private client: CoordClient | undefined;

  private constructor(private readonly opts: LocalClusterOptions, secretFile: string) {
    this.record = { pid: process.pid, dir: opts.dir, zk: '', secretFile, zookeeper: [], nodes: [] };
  }

  private save(): void {
    writeFileSync(recordFile(this.opts.dir), `${JSON.stringify(this.record, null, 2)}\n`);
  }

  private logFile(name: string): number {
    mkdirSync(path.join(this.opts.dir, 'logs'), { recursive: true });
    return openSync(path.join(this.opts.dir, 'logs', name), 'a');
  }

  /** Starts everything; on failure stops what it started and throws. */
  static async start(opts: LocalClusterOptions): Promise<LocalCluster> {
    const missing = zookeeperMissing();
    if (missing) throw new Error(missing);
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    const secretFile = path.join(opts.dir, 'secret');
    writeFileSync(secretFile, `${ClusterSecret.newText()}\n`, { mode: 0o600 });
    const cluster = new LocalCluster(opts, secretFile);
    cluster.save();
    try {
      await cluster.startZooKeeper();
      await cluster.startNodes();
      await cluster.startMonitor();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  private async startZooKeeper(): Promise<void> {
    const n = this.opts.zkServers;
    const ports = await freePorts(n * 3);
    const peers = Array.from({ length: n }, (_, i) => ({ id: i + 1, host: '127.0.0.1', quorumPort: ports[i * 3 + 1]!, electionPort: ports[i * 3 + 2]! }));
    for (const peer of peers) {
      const dir = path.join(this.opts.dir, `zookeeper-${peer.id}`);
      const dataDir = path.join(dir, 'data');
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(path.join(dataDir, 'myid'), `${peer.id}\n`);
      const clientPort = ports[(peer.id - 1) * 3]!;
      writeFileSync(path.join(dir, 'zoo.cfg'), zooCfg({ dataDir, clientAddress: '127.0.0.1', clientPort, peers, tickTime: 500, minSessionTimeout: 1_000, maxSessionTimeout: 60_000, disposable: true }));
      writeFileSync(path.join(dir, 'log4j.properties'), log4jProperties(path.join(this.opts.dir, 'logs', `zookeeper-${peer.id}.log`)));
      const out = this.logFile(`zookeeper-${peer.id}.out`);
      let child: ChildProcess;
      try {
        child = spawn('java', zookeeperJavaArgs(dir), { cwd: dir, stdio: ['ignore', out, out], detached: true });
      } finally {
        closeSync(out);
      }
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (err) => reject(new Error(`cannot run java for ZooKeeper: ${err.message} (apt-get install default-jre-headless)`)));
      });
      this.zookeeper.push(child);
      this.record.zookeeper.push({ id: peer.id, pid: child.pid!, port: clientPort });
      this.save();
    }
    this.record.zk = this.record.zookeeper.map((z) => `127.0.0.1:${z.port}`).join(',');
    this.save();
    await until(`ZooKeeper quorum of ${n} server(s) (logs in ${path.join(this.opts.dir, 'logs')})`, this.opts.timeoutMs ?? 90_000, async () => {
      const dead = this.zookeeper.findIndex((c) => c.exitCode !== null);
      if (dead >= 0) throw new Error(`ZooKeeper server ${dead + 1} ended (exit ${this.zookeeper[dead]!.exitCode}); see ${path.join(this.opts.dir, 'logs')}`);
      const modes = await Promise.all(this.record.zookeeper.map((z) => serverMode('127.0.0.1', z.port)));
      return modes.every((m) => SERVING_MODES.has(m.mode ?? '')) && modes.filter((m) => m.mode === 'leader' || m.mode === 'standalone').length === 1;
    });
  }

  private async startNodes(): Promise<void> {
    const secret = readFileSync(this.record.secretFile, 'utf8').trim();
    this.client = await connect(`zk://${this.record.zk}`, { connectTimeoutMs: 10_000, secret });
    this.driver = new LocalDriver({ detached: true, logDir: path.join(this.opts.dir, 'logs'), env: { ...process.env, TIDEPOOL_SECRET: secret } });
    this.provider = await Provisioner.start({
      client: this.client, driver: this.driver, spec: { zk: this.record.zk, workers: this.opts.workers },
      pool: { idPrefix: 'node', startTimeoutMs: this.opts.timeoutMs ?? 90_000 },
    });
    const nodes = this.provider.provision(this.opts.nodes);
    await until(`${this.opts.nodes} node(s) joining (logs in ${path.join(this.opts.dir, 'logs')})`, (this.opts.timeoutMs ?? 90_000) + 5_000, () => {
      const states = this.provider!.nodes();
      const failed = states.find((s) => s.state === 'failed');
      if (failed) throw new Error(`node ${failed.id} ${failed.error ?? 'failed'}; see ${path.join(this.opts.dir, 'logs', `${failed.id}.log`)}`);
      // Pids as soon as they are known, for `tidepool down`.
      this.record.nodes = this.driver!.pidsById();
      this.save();
      return nodes.every((n) => states.find((s) => s.id === n.id)?.state === 'joined');
    });
  }

  private async startMonitor(): Promise<void> {
    const err = this.logFile('monitor.log');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [installedTidepool(), 'monitor', '--zk', this.record.zk, '--listen', `127.0.0.1:${this.opts.dashboardPort}`, '--json'], {
        stdio: ['ignore', 'pipe', err], detached: true, env: { ...process.env, TIDEPOOL_SECRET: readFileSync(this.record.secretFile, 'utf8').trim() },
      });
    } finally {
      closeSync(err);
    }
    this.monitor = child;
    this.record.monitor = { pid: child.pid! };
    this.save();
    const ready = await new Promise<{ dashboard: string }>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the monitor did not start within ${Math.round((this.opts.timeoutMs ?? 90_000) / 1000)} s; see ${path.join(this.opts.dir, 'logs', 'monitor.log')}`)), this.opts.timeoutMs ?? 90_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (!line) return;
        clearTimeout(timer);
        resolve(JSON.parse(line) as { dashboard: string });
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the monitor ended (exit ${code}); see ${path.join(this.opts.dir, 'logs', 'monitor.log')}`));
      });
    });
    child.stdout!.destroy(); // nothing more is read; the monitor writes its logs to its file
    this.record.dashboard = ready.dashboard;
    this.save();
  }

  /** Drains the nodes, then stops the monitor and ZooKeeper; removes the record and ZooKeeper's data (the logs stay). */
  async stop(): Promise<void> {
    await this.provider?.stop();
    await this.client?.close().catch(() => undefined);
    if (this.monitor) await terminate(this.monitor, 10_000);
    await Promise.all(this.zookeeper.map((z) => terminate(z, 10_000)));
    for (const z of this.record.zookeeper) rmSync(path.join(this.opts.dir, `zookeeper-${z.id}`), { recursive: true, force: true });
    rmSync(recordFile(this.opts.dir), { force: true });
  }
}

/**
 * `tidepool down`: stops the cluster recorded in `dir`. The `tidepool up` process, if it still runs,
 * is asked to stop everything (SIGTERM) and waited for; whatever it recorded and still runs is then
 * stopped directly (SIGTERM, SIGKILL after `graceMs`). Returns what was stopped.
 */
export async function stopRecordedCluster(dir: string, graceMs = 15_000, upTimeoutMs = 180_000): Promise<{ record: ClusterRecord; stopped: string[] }> {
  const record = readRecord(dir);
  if (!record) throw new Error(`no cluster is up in ${dir} (no ${recordFile(dir)})`);
  const stopped: string[] = [];
  if (runs(record.pid, ' up')) {
    process.kill(record.pid, 'SIGTERM');
    await until(`tidepool up (pid ${record.pid}) to stop its cluster`, upTimeoutMs, () => !alive(record.pid));
    stopped.push(`tidepool up (pid ${record.pid})`);
  }
  const leftovers = [
    ...record.nodes.map((n) => ({ what: `node ${n.id}`, pid: n.pid, marker: n.id })),
    ...(record.monitor ? [{ what: 'monitor', pid: record.monitor.pid, marker: 'monitor' }] : []),
    ...record.zookeeper.map((z) => ({ what: `ZooKeeper server ${z.id}`, pid: z.pid, marker: path.join(dir, `zookeeper-${z.id}`) })),
  ].filter((p) => runs(p.pid, p.marker));
  for (const p of leftovers) process.kill(p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (leftovers.some((p) => alive(p.pid)) && Date.now() < deadline) await delay(100);
  for (const p of leftovers) {
    if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    stopped.push(`${p.what} (pid ${p.pid})`);
  }
  await until('the cluster\'s processes to end', graceMs, () => leftovers.every((p) => !alive(p.pid)));
  for (const z of record.zookeeper) rmSync(path.join(dir, `zookeeper-${z.id}`), { recursive: true, force: true });
  rmSync(recordFile(dir), { force: true });
  return { record, stopped };
}
