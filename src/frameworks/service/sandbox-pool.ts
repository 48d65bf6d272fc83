/**
 * Child processes that run sandboxed tasks (isolate-host). A process that dies — an isolate out of
 * memory can abort it — is replaced; the task it was running is retried in a fresh process up to
 * `retries` times and then fails with the reason, so one poisonous task cannot take down its node.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Code } from './graph-format.js';

export interface SandboxLimits {
  /** Memory of one isolate (MB; default 128). */
  memoryMb?: number;
  /** Time one task may run (ms; default 60 000). */
  timeoutMs?: number;
  /** Runs of a task whose sandbox process died, after the first (default 1). */
  retries?: number;
}

/**
 * `graph`, `codes` and `packages` (bundles) only when the process has not loaded this batch yet (a large
 * graph is sent once per process). `each`: one message per outcome (else the outcomes travel together).
 */
export type HostRequest = { type: 'run'; key: string; graph?: string; codes?: Code[]; packages?: string[]; indexes: number[]; timeoutMs: number; memoryMb: number; each?: boolean };
/** Outcomes as `[index, outcome JSON]`. */
export type HostReply = { type: 'ready' } | { type: 'outcomes'; outcomes: [number, string][] } | { type: 'done'; outcomes: [number, string][] };

const here = import.meta.url;
const hostFile = fileURLToPath(new URL(`./isolate-host${here.endsWith('.ts') ? '.ts' : '.js'}`, here));

/** One sandbox process; `run` resolves with what it finished, or reports its death. */
class SandboxProcess {
  readonly child: ChildProcess;
  /** The batch whose graph this process holds. */
  loadedKey: string | undefined;
  private exitInfo: string | undefined;
  private listener: ((m: HostReply) => void) | undefined;
  private onExit: ((why: string) => void) | undefined;

  constructor() {
    const execArgv = ['--no-node-snapshot', '--disallow-code-generation-from-strings'];
    if (hostFile.endsWith('.ts')) execArgv.push('--import', 'tsx');
    this.child = fork(hostFile, [], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    this.child.stderr?.resume();
    this.child.on('message', (m: HostReply) => this.listener?.(m));
    this.child.on('exit', (code, signal) => {
      this.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      this.onExit?.(this.exitInfo);
    });
    (this.child.stderr as { unref?: () => void } | null)?.unref?.();
    this.hold(false);
  }

  /** A sandbox keeps its parent alive only while it owes an answer (its IPC channel is referenced then). */
  private hold(busy: boolean): void {
    const channel = (this.child as unknown as { channel?: { ref(): void; unref(): void } }).channel;
    if (busy) {
      this.child.ref();
      channel?.ref();
    } else {
      this.child.unref();
      channel?.unref();
    }
  }

  get dead(): boolean {
    return this.exitInfo !== undefined;
  }

  /**
   * Runs indexes in order; `onOutcome` for each; resolves when done or rejects with the index running
   * when it died: the first without an outcome when outcomes came one by one (`each`) or only one was
   * owed, else undefined (it cannot be told).
   */
  run(req: HostRequest, onOutcome: (index: number, outcome: string) => void): Promise<void> {
    this.hold(true);
    return new Promise<void>((resolve, reject) => {
      const pending = new Set(req.indexes);
      this.listener = (m) => {
        if (m.type === 'ready') return;
        for (const [index, outcome] of m.outcomes) {
          pending.delete(index);
          onOutcome(index, outcome);
        }
        if (m.type === 'done') resolve();
      };
      this.onExit = (why) => reject(Object.assign(new Error(why), { running: req.each || pending.size === 1 ? [...pending][0] : undefined }));
      if (this.dead) return reject(Object.assign(new Error(this.exitInfo!), { running: req.indexes[0] }));
      this.child.send(this.loadedKey === req.key ? { ...req, graph: undefined, codes: undefined, packages: undefined } : req);
      this.loadedKey = req.key;
    }).finally(() => {
      if (!this.dead) this.hold(false);
    });
  }

  kill(): void {
    if (!this.dead) this.child.kill('SIGKILL');
  }
}

/** A pool of sandbox processes (one per concurrent caller is enough: each caller runs one chunk at a time). */
export class SandboxPool {
  private idle: SandboxProcess[] = [];
  private readonly all = new Set<SandboxProcess>();
  private readonly deaths = new Map<string, number>();
  /** Sandbox processes started so far (replacements included). */
  started = 0;

  constructor(private readonly limits: SandboxLimits = {}) {}

  private take(): SandboxProcess {
    const p = this.idle.pop();
    if (p && !p.dead) return p;
    const fresh = new SandboxProcess();
    this.started++;
    this.all.add(fresh);
    return fresh;
  }

  /** The live sandbox processes (their pids for monitoring). */
  processes(): ChildProcess[] {
    return [...this.all].filter((p) => !p.dead).map((p) => p.child);
  }

  /**
   * Runs tasks `indexes` of a batch; returns each task's outcome JSON (`onOutcome` hears each as it
   * arrives). `together`: the sandbox sends the outcomes of the request in one message rather than one
   * each (cheaper for short tasks); a death while several were owed is then blamed on no task, and they
   * are run again one message each, so a poisonous task still fails after its retries (one process later).
   */
  async run(key: string, graph: string, codes: Code[], indexes: number[], onOutcome?: (index: number) => void, batchLimits: SandboxLimits = {}, packages: string[] = [], together = false): Promise<Map<number, string>> {
    const limits = { ...this.limits, ...batchLimits };
    const out = new Map<number, string>();
    let todo = indexes.slice();
    // After a death, one message per outcome: a death is then always blamed on the task it ran.
    let each = !together;
    while (todo.length > 0) {
      const proc = this.take();
      try {
        await proc.run({ type: 'run', key, graph, codes, packages, indexes: todo, timeoutMs: limits.timeoutMs ?? 60_000, memoryMb: limits.memoryMb ?? 128, each }, (i, o) => {
          out.set(i, o);
          onOutcome?.(i);
        });
        this.idle.push(proc);
        todo = [];
      } catch (e) {
        this.all.delete(proc);
        proc.kill();
        each = true;
        const running = (e as { running?: number }).running;
        if (running !== undefined) {
          const id = `${key}:${running}`;
          const deaths = (this.deaths.get(id) ?? 0) + 1;
          this.deaths.set(id, deaths);
          if (deaths > (limits.retries ?? 1)) {
            out.set(running, JSON.stringify({ ok: false, err: { name: 'SandboxCrash', message: `the sandbox process died (${(e as Error).message}) while running this task, ${deaths} time(s); it is not retried again` } }));
          }
        }
        todo = todo.filter((i) => !out.has(i));
      }
    }
    return out;
  }

  close(): void {
    for (const p of this.all) p.kill();
    this.all.clear();
    this.idle = [];
  }
}
