/**
 * Starting `tidepool node` processes from a program (the CLI's `solve --zk --nodes N`, tests):
 * each is a child process of this one, ready once it printed its JSON ready line.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface NodeProcess {
  id: string;
  address: string;
  /** `http://host:port` of its /metrics, /healthz and /readyz (started with --metrics-port). */
  metrics?: string;
  /** Its coordination session's timeout as ZooKeeper granted it (`--session-timeout`, bounded by the ensemble). */
  sessionTimeoutMs?: number;
  process: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
}

export interface NodeProcessOptions {
  zk: string;
  /** The cluster secret's file (else the child reads TIDEPOOL_SECRET from its environment). */
  secretFile?: string;
  workers?: number;
  id?: string;
  /** The CLI entry to run (default: the one running now, with the same Node flags). */
  entry?: { execArgv: string[]; script: string };
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** The working directory of the node (default: this process's). */
  cwd?: string;
  timeoutMs?: number;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts one node process and resolves once it is registered and ready. */
export function startNodeProcess(opts: NodeProcessOptions): Promise<NodeProcess> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Children never outlive their parent.
    process.once('exit', () => {
      for (const p of live) p.kill('SIGKILL');
    });
  }
  const entry = opts.entry ?? { execArgv: process.execArgv, script: process.argv[1]! };
  // --port 0 explicitly: a config file or TIDEPOOL_PORT the child inherits must not make local nodes share a port.
  const args = [...entry.execArgv, entry.script, 'node', '--zk', opts.zk, '--workers', String(opts.workers ?? 1), '--port', '0', '--json'];
  if (opts.secretFile !== undefined) args.push('--secret-file', opts.secretFile);
  if (opts.id) args.push('--id', opts.id);
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env, ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}) });
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => {
    live.delete(child);
    resolve(code ?? signal ?? 'unknown');
  }));
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node process not ready within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const ready = JSON.parse(line) as { node: string; address: string; metrics?: string; sessionTimeoutMs?: number };
      resolve({ id: ready.node, address: ready.address, ...(ready.metrics ? { metrics: ready.metrics } : {}), ...(ready.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: ready.sessionTimeoutMs } : {}), process: child, exited, stderr: () => stderr, kill: (s = 'SIGKILL') => child.kill(s) });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`node process exited (${code}) before it was ready; stderr:\n${stderr}`));
    });
  });
}

/** Drains and stops node processes (SIGTERM), waiting for them to exit. */
export async function stopNodeProcesses(nodes: readonly NodeProcess[]): Promise<void> {
  for (const n of nodes) n.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
}
