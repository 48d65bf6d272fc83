import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../util/package-info.js';
import { nodeArgs, type NodeDriver, type NodeLaunch, type NodeSpec } from './node-provider.js';

export interface LocalDriverOptions {
  /** The `tidepool` command to run, as [program, ...arguments] (default: this Node.js with this installation's bin/tidepool.mjs). */
  command?: readonly string[];
  /** The nodes' environment (default: this process's; the cluster secret may come from TIDEPOOL_SECRET there). */
  env?: NodeJS.ProcessEnv;
  /** Write each node's output to `<logDir>/<id>.log` (default: its stderr is kept in memory for errors, its stdout dropped). */
  logDir?: string;
  /**
   * Start nodes in their own process group, so that a Ctrl-C in this terminal reaches only this
   * process, which then drains them in order (`tidepool up`). Default false: they also die with it.
   */
  detached?: boolean;
}

/** This installation's bin/tidepool.mjs (from the sources or from dist/). */
export function installedTidepool(): string {
  return path.join(packageRoot(), 'bin', 'tidepool.mjs');
}

const attached = new Set<ChildProcess>();
let exitHook = false;

/** The `local` provider's driver: each node is a child process of this one, on this machine. */
export class LocalDriver implements NodeDriver {
  readonly name = 'local';
  private readonly children = new Map<string, ChildProcess>();

  constructor(private readonly opts: LocalDriverOptions = {}) {}

  start(id: string, spec: NodeSpec): Promise<NodeLaunch> {
    const [program, ...pre] = this.opts.command ?? [process.execPath, installedTidepool()];
    let out: number | 'ignore' = 'ignore';
    let err: number | 'pipe' = 'pipe';
    if (this.opts.logDir !== undefined) {
      mkdirSync(this.opts.logDir, { recursive: true });
      out = err = openSync(path.join(this.opts.logDir, `${id}.log`), 'a');
    }
    let child: ChildProcess;
    try {
      child = spawn(program!, [...pre, ...nodeArgs(id, spec)], { stdio: ['ignore', out, err], env: this.opts.env ?? process.env, detached: this.opts.detached === true });
    } finally {
      if (typeof out === 'number') closeSync(out);
    }
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    if (!this.opts.detached) {
      attached.add(child);
      if (!exitHook) {
        exitHook = true;
        process.once('exit', () => {
          for (const c of attached) c.kill('SIGKILL');
        });
      }
    }
    this.children.set(id, child);
    const ended = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => {
        attached.delete(child);
        this.children.delete(id);
        const tail = stderr.trim().split('\n').slice(-3).join(' | ');
        resolve(`${signal ?? `exit ${code}`}${tail ? `: ${tail}` : ''}`);
      });
    });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve({ where: `pid ${child.pid}`, ended }));
      child.once('error', (e) => {
        this.children.delete(id);
        attached.delete(child);
        reject(new Error(`cannot run ${program}: ${e.message}`));
      });
    });
  }

  async stop(id: string, force: boolean): Promise<void> {
    this.children.get(id)?.kill(force ? 'SIGKILL' : 'SIGTERM');
  }

  /** The nodes running now, with their pids. */
  pidsById(): Array<{ id: string; pid: number }> {
    return [...this.children].flatMap(([id, c]) => (c.pid !== undefined ? [{ id, pid: c.pid }] : []));
  }

  /** Pids of the nodes running now. */
  pids(): number[] {
    return this.pidsById().map((p) => p.pid);
  }
}
