import { spawn, type ChildProcess } from 'node:child_process';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { nodeArgs, secretText, type NodeDriver, type NodeLaunch, type NodeSpec } from './node-provider.js';

/** A machine the ssh provider may start nodes on. */
export interface SshHost {
  /** What ssh dials: "host", "user@host" (a port goes in `sshOptions` or ~/.ssh/config). */
  host: string;
  /** The `tidepool` command there, as shell words (default: the driver's `command`). */
  command?: string;
}

export interface SshDriverOptions {
  hosts: ReadonlyArray<string | SshHost>;
  /** The `tidepool` command on the hosts, as shell words (default "tidepool"). */
  command?: string;
  /** Private key (ssh -i). */
  identityFile?: string;
  /** More ssh arguments, e.g. ["-o", "StrictHostKeyChecking=accept-new"] or ["-p", "2222"]. */
  sshOptions?: readonly string[];
  /** Nodes per host (default 1). */
  nodesPerHost?: number;
  /** The cluster secret (every accepted one), handed to each node on its standard input (never on a command line). */
  secret?: ClusterSecret;
  /** The ssh program (default "ssh"). */
  ssh?: string;
}

interface Running {
  host: SshHost;
  child: ChildProcess;
  /** The node's pid on its host, once it told. */
  pid?: number;
}

const PID_LINE = /^tidepool-pid (\d+)$/m;

/** Quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The `ssh` provider's driver: starts `tidepool node` on a list of hosts over SSH (key
 * authentication, BatchMode: never a password prompt). The remote shell prints the node's pid, then
 * becomes the node (exec); the SSH session lasts as long as the node, so its end is the node's end.
 * The secret travels on the session's standard input. Stopping sends SIGTERM (drain) or SIGKILL to
 * that pid over a second session. A host is chosen among those with a free slot, the one whose last
 * start failed longest ago first.
 */
export class SshDriver implements NodeDriver {
  readonly name = 'ssh';
  private readonly hosts: SshHost[];
  private readonly running = new Map<string, Running>();
  private readonly failedAt = new Map<string, number>();

  constructor(private readonly opts: SshDriverOptions) {
    if (opts.hosts.length === 0) throw new Error('the ssh provider needs at least one host');
    this.hosts = opts.hosts.map((h) => (typeof h === 'string' ? { host: h } : h));
  }

  private sshArgs(host: string): string[] {
    return [
      '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=5',
      ...(this.opts.identityFile !== undefined ? ['-i', this.opts.identityFile] : []),
      ...(this.opts.sshOptions ?? []),
      host,
    ];
  }

  /** The host for the next node: a free slot, least recently failed, then fewest nodes, then list order. */
  private choose(): SshHost | undefined {
    const slots = this.opts.nodesPerHost ?? 1;
    const load = (h: SshHost) => [...this.running.values()].filter((r) => r.host === h).length;
    const free = this.hosts.filter((h) => load(h) < slots);
    free.sort((a, b) => (this.failedAt.get(a.host) ?? -Infinity) - (this.failedAt.get(b.host) ?? -Infinity) || load(a) - load(b));
    return free[0];
  }

  start(id: string, spec: NodeSpec): Promise<NodeLaunch> {
    const host = this.choose();
    if (!host) return Promise.reject(new Error(`every host is in use (${this.hosts.length} host(s), ${this.opts.nodesPerHost ?? 1} node(s) each)`));
    const command = host.command ?? this.opts.command ?? 'tidepool';
    const secret = this.opts.secret !== undefined ? secretText(this.opts.secret) : undefined;
    const script = [
      // The secret's lines, up to an empty line, become TIDEPOOL_SECRET; none at all ends the session.
      ...(secret !== undefined ? ['TIDEPOOL_SECRET=$(sed \'/^$/q\'); [ -n "$TIDEPOOL_SECRET" ] || exit 97; export TIDEPOOL_SECRET'] : []),
      'echo "tidepool-pid $$"',
      `exec ${command} ${nodeArgs(id, spec).map(shellQuote).join(' ')}`,
    ].join('; ');
    const child = spawn(this.opts.ssh ?? 'ssh', [...this.sshArgs(host.host), script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const entry: Running = { host, child };
    this.running.set(id, entry);
    if (secret !== undefined) child.stdin!.write(`${secret}\n\n`);
    child.stdin!.on('error', () => {}); // the session may end before it reads
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    const tail = () => err.trim().split('\n').filter(Boolean).slice(-3).join(' | ');
    const ended = new Promise<string>((resolve) => {
      child.once('close', (code, signal) => {
        this.running.delete(id);
        resolve(`${signal ?? `exit ${code}`}${tail() ? `: ${tail()}` : ''}`);
      });
    });
    return new Promise((resolve, reject) => {
      let launched = false;
      child.stdout!.on('data', (d: Buffer) => {
        if (launched) return;
        out += d.toString();
        const m = PID_LINE.exec(out);
        if (!m) return;
        launched = true;
        entry.pid = Number(m[1]);
        resolve({ where: `${host.host} (pid ${entry.pid})`, ended });
      });
      child.once('error', (e) => {
        this.running.delete(id);
        this.failedAt.set(host.host, Date.now());
        reject(new Error(`cannot run ssh: ${e.message}`));
      });
      void ended.then((how) => {
        if (launched) return;
        this.failedAt.set(host.host, Date.now());
        reject(new Error(`ssh ${host.host} ended before the node started (${how})`));
      });
    });
  }

  async stop(id: string, force: boolean): Promise<void> {
    const entry = this.running.get(id);
    if (!entry) return;
    if (entry.pid === undefined) {
      entry.child.kill('SIGKILL'); // not started yet: end the session
      return;
    }
    const signal = force ? 'KILL' : 'TERM';
    const kill = spawn(this.opts.ssh ?? 'ssh', [...this.sshArgs(entry.host.host), `kill -${signal} ${entry.pid}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    kill.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      kill.once('close', resolve);
      kill.once('error', () => resolve(-1));
    });
    if (code !== 0 && force) entry.child.kill('SIGKILL'); // at least let go of the session
    if (code !== 0) throw new Error(`kill -${signal} ${entry.pid} on ${entry.host.host} failed (${code}): ${err.trim()}`);
  }

  /** Where the nodes run now, by id. */
  placements(): Map<string, string> {
    return new Map([...this.running].map(([id, r]) => [id, r.host.host]));
  }
}
