/**
 * The application's view of task parallelism as a service (seed 002 §2): closures are tasks;
 * `start` captures a whole batch and sends it in one round trip; `await t.result` gives a task's
 * result once its batch has finished and its side effects were applied to this process's memory.
 */
import { BatchApplier, WriteConflictError } from './apply-changes.js';
import { Capture, CaptureError, type CaptureOptions } from './capture.js';
import type { BatchCosts, BatchExecutor } from './executor.js';
import type { AnyFunction, TaskOutcome } from './graph-format.js';
import { LocalExecutor } from './local-executor.js';
import { RemoteExecutor, type ConnectOptions } from './remote-executor.js';
import { mapStack } from './stack-map.js';
import { bundlePackage } from './package-bundle.js';
import type { SandboxLimits } from './sandbox-pool.js';

/** Per batch: limits tighter than the service's (a time limit also applies locally). */
export interface BatchOptions {
  limits?: Pick<SandboxLimits, 'timeoutMs' | 'memoryMb'>;
}

export class DistributedTask<R> {
  /** Resolves with the task's result once its batch is done (rejects with an AggregateError if the task failed). */
  readonly result: Promise<R>;
  private settle!: { resolve(v: R): void; reject(e: unknown): void };
  started = false;
  private canceller: (() => Promise<void>) | undefined;

  constructor(readonly fn: () => R, readonly label?: string) {
    this.result = new Promise<R>((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => undefined); // awaited by the application, or not at all
  }

  /** Cancels this task's whole batch (its result rejects); false if it was not started. */
  async cancel(): Promise<boolean> {
    if (!this.canceller) return false;
    await this.canceller();
    return true;
  }

  /** @internal */
  onCancel(cancel: () => Promise<void>): void {
    this.canceller = cancel;
  }

  /** @internal */
  finish(ok: boolean, value: unknown): void {
    if (ok) this.settle.resolve(value as R);
    else this.settle.reject(value);
  }
}

export interface DistributionOptions extends CaptureOptions {
  /** Worker threads of `Distribution.local()` (default: this machine's cores). */
  workers?: number;
  /** Time one task may run locally (ms; default none). */
  timeoutMs?: number;
  /** Heap of one local worker thread (MB; default 1024): a task beyond it fails its batch, not the process. */
  memoryMb?: number;
}

/** How a package the tasks of a batch use travelled. */
export interface PackageTravel {
  name: string;
  version: string;
  /** `reference`: the service has this version and supplied it; `bundle`: this client bundled it. */
  as: 'reference' | 'bundle';
}

export class Distribution {
  /** The cost breakdown of the latest batch that finished. */
  lastCosts: BatchCosts | undefined;
  /** The packages of the latest batch started, and how each travelled. */
  lastPackages: PackageTravel[] = [];

  private constructor(private readonly executor: BatchExecutor, private readonly opts: CaptureOptions) {}

  /** Runs tasks on this machine's worker threads, with the same capture, snapshot and side effects. */
  static local(opts: DistributionOptions = {}): Distribution {
    return new Distribution(new LocalExecutor(opts.workers, opts.timeoutMs, opts.memoryMb), opts);
  }

  /** Connects to a tidepool service (`tidepool serve`). */
  static async connect(url: string, opts: ConnectOptions & CaptureOptions): Promise<Distribution> {
    const executor = await RemoteExecutor.open(url, opts);
    return new Distribution(executor, opts);
  }

  /** A task of this closure (not started). */
  task<R>(fn: () => R, label?: string): DistributedTask<R> {
    return new DistributedTask(fn, label);
  }

  /**
   * Starts tasks as one batch: captures them (a CaptureError names what cannot be distributed) and
   * sends them in one round trip. Resolves when the batch is started; results come with `t.result`.
   */
  async start(tasks: DistributedTask<unknown>[], opts: BatchOptions = {}): Promise<void> {
    const t0 = performance.now();
    const capture = new Capture(this.opts);
    tasks.forEach((t, i) => {
      if (t.started) throw new Error(`task ${t.label ?? i} was already started`);
    });
    capture.addTasks(tasks.map((t, i) => ({ fn: t.fn, label: t.label ?? `task ${i}` })));
    await capture.resolvePackages();
    capture.done();
    await this.shipPackages(capture);
    for (const t of tasks) t.started = true;
    const { cancel } = await this.run(capture, (i, ok, v) => tasks[i]!.finish(ok, v), t0, opts.limits);
    for (const t of tasks) t.onCancel(cancel);
  }

  /** Runs `body(i)` for every i in [from, to) as a batch of tasks; resolves when all side effects are applied. */
  async parallelFor(from: number, to: number, body: (i: number) => void, opts: BatchOptions = {}): Promise<void> {
    const t0 = performance.now();
    const capture = new Capture(this.opts);
    for (let i = from; i < to; i++) capture.addTask(body as AnyFunction, [i], `iteration ${i}`);
    await capture.resolvePackages();
    capture.done();
    await this.shipPackages(capture);
    const errors: unknown[] = [];
    const { completion } = await this.run(capture, (_i, ok, v) => {
      if (!ok) errors.push(v);
    }, t0, opts.limits);
    await completion;
    if (errors.length > 0) throw new AggregateError(errors.flatMap((e) => (e instanceof AggregateError ? e.errors : [e])), `${errors.length} of ${to - from} iterations failed`);
  }

  /** Sends a captured batch; returns a promise of its completion (results applied, tasks settled). */
  private async run(capture: Capture, settle: (i: number, ok: boolean, v: unknown) => void, t0: number, limits?: SandboxLimits): Promise<{ completion: Promise<void>; cancel(): Promise<void> }> {
    const json = JSON.stringify(capture.graph);
    const serializationMs = performance.now() - t0;
    const run = await this.executor.start(json, capture.graph.tasks.length, limits, { serializationMs });
    const completion = (async () => {
      let outcomes: TaskOutcome[];
      let costs: Partial<BatchCosts>;
      try {
        ({ outcomes, costs } = await run.outcomes());
      } catch (e) {
        capture.graph.tasks.forEach((_t, i) => settle(i, false, e));
        return;
      }
      const a0 = performance.now();
      const applier = new BatchApplier(capture);
      let diffMs = 0;
      let taskMs = 0;
      outcomes.forEach((o, i) => {
        diffMs += o.dms ?? 0;
        taskMs += o.ms ?? 0;
        const label = capture.graph.tasks[i]?.label ?? `task ${i}`;
        if (!o.ok) return settle(i, false, remoteError(label, o, capture));
        try {
          settle(i, true, applier.apply(i, o));
        } catch (e) {
          settle(i, false, e instanceof WriteConflictError ? e : new AggregateError([e], `${label}: ${(e as Error).message}`));
        }
      });
      this.lastCosts = {
        serializationMs, transferMs: 0, dispatchMs: 0, executionMs: 0, roundTrips: 0, requestBytes: json.length, responseBytes: 0, ...costs,
        diffingMs: diffMs + (performance.now() - a0), taskMs,
      };
    })();
    return { completion, cancel: () => run.cancel() };
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

/** A remote exception as an AggregateError whose inner error's stack points at the client's source lines. */
function remoteError(label: string, o: TaskOutcome, capture: Capture): AggregateError {
  const err = o.err ?? { name: 'Error', message: 'unknown failure' };
  const inner = new Error(err.message);
  inner.name = err.name;
  inner.stack = err.stack ? mapStack(err.stack, capture) : `${err.name}: ${err.message}`;
  return new AggregateError([inner], `${label} failed: ${err.name}: ${err.message}`);
}
