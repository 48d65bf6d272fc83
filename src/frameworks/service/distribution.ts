/**
 * The application's view of task parallelism as a service (seed 002 §2): closures are tasks; `start`
 * captures a whole batch and sends it in one round trip; each task's result settles as soon as its
 * outcome arrives and its side effects were applied to this process's memory; `completed` yields tasks
 * as they finish (Dask's `as_completed`); `put` shares a value once (Ray's `put`, Dask's `scatter`).
 */
import { Capture, CaptureError, CLIENT_ONLY, type CaptureOptions } from './capture.js';
import { ContentBlobs } from './content-blobs.js';
import { DistributedTask, type TaskBatch } from './distributed-task.js';
import type { BatchCosts, BatchExecutor } from './executor.js';
import type { AnyFunction } from './graph-format.js';
import { LocalExecutor } from './local-executor.js';
import { RemoteExecutor, type ConnectOptions } from './remote-executor.js';
import { bundlePackage } from './package-bundle.js';
import type { SandboxLimits } from './sandbox-pool.js';
import { BatchSettlement, printConsoleLine, type ConsoleLine, type TaskSlot } from './batch-settlement.js';
import { OutcomeQueue } from './outcome-queue.js';
import type { SharedValue } from './shared-value.js';

export { DistributedTask };

/** Per batch: limits tighter than the service's (a time limit also applies locally). */
export interface BatchOptions {
  limits?: Pick<SandboxLimits, 'timeoutMs' | 'memoryMb'>;
}

/** Options of both kinds of Distribution. */
export interface ClientOptions extends CaptureOptions {
  /**
   * Where what tasks print goes (default: this process's stdout for log/info/debug and stderr for
   * warn/error, each line prefixed by its task: `[task 3] …`).
   */
  onConsole?: (line: ConsoleLine) => void;
}

export interface DistributionOptions extends ClientOptions {
  /** Worker threads of `Distribution.local()` (default: this machine's cores). */
  workers?: number;
  /** Time one task may run locally (ms; default none). */
  timeoutMs?: number;
  /** Heap of one local worker thread (MB; default 1024): a task beyond it fails its batch, not the process. */
  memoryMb?: number;
}

/** A batch `start` sent: `done` resolves with its costs once it is over (every task settled, its outcomes all in). */
export interface StartedBatch {
  tasks: number;
  done: Promise<BatchCosts>;
}

/** How a package the tasks of a batch use travelled. */
export interface PackageTravel {
  name: string;
  version: string;
  /** `reference`: the service has this version and supplied it; `bundle`: this client bundled it. */
  as: 'reference' | 'bundle';
}

/** The capture cache of a connection: blobs sent by hash only (hits) or with their bytes (misses), and hashing saved. */
export interface CacheStats {
  hits: number;
  misses: number;
  uploadedBytes: number;
  /** Bulk values hashed, and those found unchanged since their last capture (compared, not hashed). */
  hashed: number;
  reused: number;
}

export class Distribution {
  /** The cost breakdown of the latest batch that finished (set once it is over: see `StartedBatch.done`). */
  lastCosts: BatchCosts | undefined;
  /** The packages of the latest batch started, and how each travelled. */
  lastPackages: PackageTravel[] = [];
  /** Per connection: the hashes and copies of captured bulk data (content-blobs.ts). */
  private readonly content = new ContentBlobs();
  private readonly onConsole: (line: ConsoleLine) => void;

  private constructor(private readonly executor: BatchExecutor, private readonly opts: ClientOptions) {
    this.onConsole = opts.onConsole ?? printConsoleLine;
  }

  /** Runs tasks on this machine's worker threads, with the same capture, snapshot and side effects. */
  static local(opts: DistributionOptions = {}): Distribution {
    return new Distribution(new LocalExecutor(opts.workers, opts.timeoutMs, opts.memoryMb), opts);
  }

  /** Connects to a tidepool service (`tidepool serve`). */
  static async connect(url: string, opts: ConnectOptions & ClientOptions): Promise<Distribution> {
    const executor = await RemoteExecutor.open(url, opts);
    return new Distribution(executor, opts);
  }

  /** The capture cache's counters for this connection. */
  get cacheStats(): CacheStats {
    const t = this.executor.transfers;
    return { hits: t.blobHits, misses: t.blobMisses, uploadedBytes: t.uploadedBytes, ...this.content.stats };
  }

  /** A task of this closure (not started). */
  task<R>(fn: () => R, label?: string): DistributedTask<R> {
    return new DistributedTask(fn, label);
  }

  /**
   * Shares a value with the tasks of this connection: captured now (data only: objects, arrays, typed
   * arrays, Maps, Sets, dates), sent once, and named by hash in every batch whose closures use it
   * (`shared.value`). A snapshot: later changes by this program are not seen, and tasks may only read it.
   */
  async put<T>(value: T, name = 'shared value'): Promise<SharedValue<T>> {
    const shared = Capture.shared(value, name, this.opts, this.content);
    await this.executor.upload(new Map([[shared.hash, shared.segment.bytes], ...shared.blobs.map((b) => [b.hash, b.bytes] as const)]));
    return shared;
  }

  /**
   * Starts tasks as one batch: captures them (a CaptureError names what cannot be distributed) and
   * sends them in one round trip. Resolves when the batch is started; each task's `result` settles as
   * its outcome arrives.
   */
  async start(tasks: DistributedTask<unknown>[], opts: BatchOptions = {}): Promise<StartedBatch> {
    const t0 = performance.now();
    tasks.forEach((t, i) => {
      if (t.started) throw new Error(`task ${t.label ?? i} was already started`);
    });
    const capture = new Capture(this.opts, this.content);
    capture.addTasks(tasks.map((t, i) => ({ fn: t.fn, label: t.label ?? `task ${i}` })));
    const slots: TaskSlot[] = tasks.map((t) => ({ settle: (as, v) => t.finish(as, v), console: (lines) => t.console.push(...lines) }));
    const { settlement, done } = await this.run(capture, slots, t0, opts.limits);
    tasks.forEach((t, index) => (t.batch = { run: settlement, index }));
    return { tasks: tasks.length, done };
  }

  /** Runs `body(i)` for every i in [from, to) as a batch of tasks; resolves when all side effects are applied. */
  async parallelFor(from: number, to: number, body: (i: number) => void, opts: BatchOptions = {}): Promise<void> {
    const t0 = performance.now();
    const capture = new Capture(this.opts, this.content);
    for (let i = from; i < to; i++) capture.addTask(body as AnyFunction, [i], `iteration ${i}`);
    const errors: unknown[] = [];
    const slots: TaskSlot[] = Array.from({ length: to - from }, () => ({
      settle: (as, v) => {
        if (as !== 'done') errors.push(v);
        return true;
      },
    }));
    await (await this.run(capture, slots, t0, opts.limits)).done;
    if (errors.length > 0) throw new AggregateError(errors.flatMap((e) => (e instanceof AggregateError ? e.errors : [e])), `${errors.length} of ${to - from} iterations failed`);
  }

  /**
   * Yields tasks as they finish (their outcome applied, or failed: `await t.result` tells), starting those
   * not started yet as one batch. Leaving the loop early (`break`, `return`, an exception) cancels the
   * tasks not yet yielded.
   */
  async *completed<R>(tasks: DistributedTask<R>[], opts: BatchOptions = {}): AsyncGenerator<DistributedTask<R>, void, undefined> {
    const fresh = tasks.filter((t) => !t.started);
    if (fresh.length > 0) await this.start(fresh as DistributedTask<unknown>[], opts);
    const queue = new OutcomeQueue<DistributedTask<R>>();
    let left = tasks.length;
    for (const t of tasks) {
      t.onSettled(() => {
        queue.push(t);
        if (--left === 0) queue.end();
      });
    }
    const yielded = new Set<DistributedTask<R>>();
    try {
      for await (const t of queue) {
        yielded.add(t);
        yield t;
      }
    } finally {
      if (yielded.size < tasks.length) await this.cancel(tasks.filter((t) => !yielded.has(t)));
    }
  }

  /** Cancels tasks that have not finished: their results reject with a CancelledError, their effects are never applied. Resolves with how many were cancelled. */
  async cancel(tasks: DistributedTask<unknown>[]): Promise<number> {
    const byBatch = new Map<TaskBatch, number[]>();
    for (const t of tasks) {
      if (!t.batch || t.state) continue;
      const list = byBatch.get(t.batch.run) ?? [];
      list.push(t.batch.index);
      byBatch.set(t.batch.run, list);
    }
    let n = 0;
    for (const [run, indexes] of byBatch) n += await run.cancel(indexes);
    return n;
  }

  /** Resolves the packages, ships the batch, and returns its settlement and its end (which records the costs in `lastCosts`). */
  private async run(capture: Capture, slots: TaskSlot[], t0: number, limits?: SandboxLimits): Promise<{ settlement: BatchSettlement; done: Promise<BatchCosts> }> {
    await capture.resolvePackages();
    capture.done();
    await this.shipPackages(capture);
    const serializationMs = performance.now() - t0;
    const run = await this.executor.start({ graph: capture.graph, blobs: capture.blobs }, limits, { serializationMs });
    const settlement = new BatchSettlement(capture, slots, run, { t0, serializationMs, requestBytes: run.costs().requestBytes ?? 0, onConsole: this.onConsole });
    const done = settlement.done.then((costs) => (this.lastCosts = costs));
    done.catch(() => undefined);
    return { settlement, done };
  }

  /** Each package travels as a reference when the executor has its version, else bundled here (refused with a CaptureError if it cannot be). */
  private async shipPackages(capture: Capture): Promise<void> {
    const packages = capture.graph.packages ?? [];
    this.lastPackages = [];
    for (const [k, spec] of packages.entries()) {
      const byReference = this.executor.hasPackage?.(spec.name, spec.version) ?? false;
      if (!byReference) {
        const { root, origin } = capture.packageSources[k]!;
        try {
          spec.code = await bundlePackage(root, spec.name, spec.files);
        } catch (e) {
          throw new CaptureError(origin.path, origin.at(), (e as Error).message);
        }
      }
      this.lastPackages.push({ name: spec.name, version: spec.version, as: byReference ? 'reference' : 'bundle' });
    }
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

// A task cannot use the client's connection (a nested Distribution): capture refuses these where the program reaches them.
for (const o of [Distribution, Distribution.prototype, DistributedTask, DistributedTask.prototype]) CLIENT_ONLY.add(o);
