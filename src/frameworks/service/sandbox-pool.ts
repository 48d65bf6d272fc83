/**
 * Child processes that run sandboxed tasks (isolate-host). A process that dies — an isolate out of
 * memory can abort it — is replaced; the task it was running is retried in a fresh process up to
 * `retries` times and then fails with the reason, so one poisonous task cannot take down its node.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Code } from './graph-format.js';
import { checkSandboxPackage } from './service-dependencies.js';
import { HeldBlobs } from './held-blobs.js';

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
 * graph is sent once per process), with the blobs the graph names that the process does not hold yet
 * (`blobs`) and those it drops (`dropBlobs`: held-blobs.ts). `each`: one message per outcome (else the
 * outcomes travel together).
 */
export type HostRequest = {
  type: 'run'; key: string; graph?: string; codes?: Code[]; packages?: string[]; blobs?: [string, Uint8Array][]; dropBlobs?: string[];
  indexes: number[]; timeoutMs: number; memoryMb: number; each?: boolean;
};

/** The blobs a batch's graph names (hash → size) and where their bytes are. */
export interface BatchBlobs {
  needed: Readonly<Record<string, number>>;
  bytes(hash: string): Uint8Array;
}
/** Outcomes as `[index, outcome JSON]`. */
export type HostReply = { type: 'ready' } | { type: 'outcomes'; outcomes: [number, string][] } | { type: 'done'; outcomes: [number, string][] };

const here = import.meta.url;
const hostFile = fileURLToPath(new URL(`./isolate-host${here.endsWith('.ts') ? '.ts' : '.js'}`, here));

interface Owed {
  req: HostRequest;
  pending: Set<number>;
  onOutcome(index: number, outcome: string): void;
  resolve(): void;
  reject(e: Error): void;
}

/**
 * One sandbox process; `run` resolves with what it finished, or reports its death. Requests may queue:
 * the process serves them in order, so the next one starts without waiting for this side to send it.
 */
class SandboxProcess {
  readonly child: ChildProcess;
  /** The batch whose graph this process holds. */
  loadedKey: string | undefined;
  /** The blobs it holds. */
  readonly held = new HeldBlobs();
  private exitInfo: string | undefined;
  /** The requests sent and not done, the running one first. */
  private readonly owed: Owed[] = [];

  constructor() {
    const execArgv = ['--no-node-snapshot', '--disallow-code-generation-from-strings'];
    if (hostFile.endsWith('.ts')) execArgv.push('--import', 'tsx');
    this.child = fork(hostFile, [], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    this.child.stderr?.resume();
    this.child.on('message', (m: HostReply) => this.receive(m));
    this.child.on('exit', (code, signal) => {
      const why = (this.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`);
      // The first request owed was running; those queued behind it had not started.
      this.owed.splice(0).forEach((o, k) => o.reject(Object.assign(new Error(why), { running: k === 0 ? blamed(o) : undefined })));
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

  get busy(): boolean {
    return this.owed.length > 0;
  }

  private receive(m: HostReply): void {
    const head = this.owed[0];
    if (m.type === 'ready' || !head) return;
    for (const [index, outcome] of m.outcomes) {
      head.pending.delete(index);
      head.onOutcome(index, outcome);
    }
    if (m.type === 'done') {
      this.owed.shift();
      head.resolve();
    }
  }

  /**
   * Runs indexes in order after the requests owed before; `onOutcome` for each; resolves when done or
   * rejects with the index running when it died (see `blamed`; undefined if it had not started).
   */
  run(req: HostRequest, onOutcome: (index: number, outcome: string) => void, blobs?: BatchBlobs): Promise<void> {
    this.hold(true);
    return new Promise<void>((resolve, reject) => {
      if (this.dead) return reject(Object.assign(new Error(this.exitInfo!), { running: req.indexes[0] }));
      this.owed.push({ req, pending: new Set(req.indexes), onOutcome, resolve, reject });
      if (this.loadedKey === req.key) {
        this.child.send({ ...req, graph: undefined, codes: undefined, packages: undefined });
      } else {
        const { send, drop } = this.held.plan(blobs?.needed ?? {});
        this.child.send({ ...req, blobs: send.map((h) => [h, blobs!.bytes(h)]), dropBlobs: drop });
      }
      this.loadedKey = req.key;
    }).finally(() => {
      if (!this.dead && !this.busy) this.hold(false);
    });
  }

  kill(): void {
    if (!this.dead) this.child.kill('SIGKILL');
  }

  /** Whether what this process is running (and has queued) is only tasks of `key` in `cancelled`. */
  runsOnly(key: string, cancelled: ReadonlySet<number> | 'all'): boolean {
    return this.owed.length > 0 && this.owed.every((o) => o.req.key === key && (cancelled === 'all' || [...o.pending].every((i) => cancelled.has(i))));
  }
}

/**
 * The task a request was running when its process died: the first without an outcome when outcomes
 * came one by one (`each`) or only one was owed, else undefined (it cannot be told).
 */
function blamed(o: Owed): number | undefined {
  return o.req.each || o.pending.size === 1 ? [...o.pending][0] : undefined;
}

export interface PoolRunOptions {
  /**
   * The sandbox sends the outcomes of the request in one message rather than one each (cheaper for short
   * tasks); a death while several were owed is then blamed on no task, and they are run again one
   * message each, so a poisonous task still fails after its retries (one process later).
   */
  together?: boolean;
  /**
   * Any object standing for one caller: its requests go to the same process, a request made while the
   * previous one runs queues there and starts as soon as that one ends.
   */
  lane?: object;
}

/** A pool of sandbox processes (one per concurrent caller or lane). */
export class SandboxPool {
  private idle: SandboxProcess[] = [];
  private readonly lanes = new WeakMap<object, SandboxProcess>();
  private readonly all = new Set<SandboxProcess>();
  private readonly deaths = new Map<string, number>();
  /** Indexes cancelled, by batch (or all of them): not run, and a process running only those is killed. */
  private readonly cancelled = new Map<string, Set<number> | 'all'>();
  /** Sandbox processes started so far (replacements included). */
  started = 0;

  constructor(private readonly limits: SandboxLimits = {}) {
    checkSandboxPackage(); // here, by name, rather than as a sandbox process that dies on start
  }

  private take(lane: object | undefined): SandboxProcess {
    const own = lane && this.lanes.get(lane);
    if (own && !own.dead) {
      this.idle = this.idle.filter((p) => p !== own);
      return own;
    }
    let p = this.idle.pop();
    while (p && (p.dead || p.busy)) p = this.idle.pop();
    if (!p) {
      p = new SandboxProcess();
      this.started++;
      this.all.add(p);
    }
    if (lane) this.lanes.set(lane, p);
    return p;
  }

  /** The live sandbox processes (their pids for monitoring). */
  processes(): ChildProcess[] {
    return [...this.all].filter((p) => !p.dead).map((p) => p.child);
  }

  /**
   * Stops tasks of a batch: those not started are not run, a process running only cancelled ones is killed
   * (and replaced); their outcomes do not come.
   */
  cancel(key: string, indexes: Iterable<number> | 'all'): void {
    let set = this.cancelled.get(key);
    if (indexes === 'all') this.cancelled.set(key, (set = 'all'));
    else if (set !== 'all') {
      if (!set) this.cancelled.set(key, (set = new Set()));
      for (const i of indexes) set.add(i);
    }
    for (const p of this.all) if (p.runsOnly(key, set!)) p.kill();
  }

  private isCancelled(key: string, index: number): boolean {
    const c = this.cancelled.get(key);
    return c === 'all' || (c !== undefined && c.has(index));
  }

  /** A batch is over: forget its cancellations and deaths. */
  forget(key: string): void {
    this.cancelled.delete(key);
    for (const id of this.deaths.keys()) if (id.startsWith(`${key}:`)) this.deaths.delete(id);
  }

  /** Runs tasks `indexes` of a batch; returns each task's outcome JSON (`onOutcome` hears each as it arrives); cancelled tasks have none. */
  async run(key: string, graph: string, codes: Code[], indexes: number[], onOutcome?: (index: number) => void, batchLimits: SandboxLimits = {}, packages: string[] = [], opts: PoolRunOptions = {}, blobs?: BatchBlobs): Promise<Map<number, string>> {
    const limits = { ...this.limits, ...batchLimits };
    const out = new Map<number, string>();
    const live = (i: number) => !out.has(i) && !this.isCancelled(key, i);
    let todo = indexes.filter(live);
    // After a death, one message per outcome: a death is then always blamed on the task it ran.
    let each = !opts.together;
    while (todo.length > 0) {
      const proc = this.take(opts.lane);
      try {
        await proc.run({ type: 'run', key, graph, codes, packages, indexes: todo, timeoutMs: limits.timeoutMs ?? 60_000, memoryMb: limits.memoryMb ?? 128, each }, (i, o) => {
          out.set(i, o);
          onOutcome?.(i);
        }, blobs);
        if (!proc.busy && !proc.dead && !this.idle.includes(proc)) this.idle.push(proc);
        todo = [];
      } catch (e) {
        this.all.delete(proc);
        proc.kill();
        each = true;
        const running = (e as { running?: number }).running;
        if (running !== undefined && live(running)) {
          const id = `${key}:${running}`;
          const deaths = (this.deaths.get(id) ?? 0) + 1;
          this.deaths.set(id, deaths);
          if (deaths > (limits.retries ?? 1)) {
            out.set(running, JSON.stringify({ ok: false, err: { name: 'SandboxCrash', message: `the sandbox process died (${(e as Error).message}) while running this task, ${deaths} time(s); it is not retried again` } }));
          }
        }
        todo = todo.filter(live);
      }
    }
    for (const i of [...out.keys()]) if (this.isCancelled(key, i)) out.delete(i);
    return out;
  }

  close(): void {
    for (const p of this.all) p.kill();
    this.all.clear();
    this.idle = [];
  }
}
