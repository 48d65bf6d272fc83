/**
 * `Distribution.local()`: runs batches on this machine's worker threads, each task in a node:vm
 * sandbox with the same capture, snapshot and diff as the service — for offline development and to
 * measure what distribution costs.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import type { Arrival, BatchExecutor, BatchRun, EncodedBatch, TransferStats } from './executor.js';
import type { TaskOutcome } from './graph-format.js';
import type { SandboxLimits } from './sandbox-pool.js';
import { HeldBlobs } from './held-blobs.js';
import { runtimeBundle } from './runtime-bundle.js';
import { OutcomeQueue } from './outcome-queue.js';
import type { LocalRequest } from './local-worker.js';

const here = import.meta.url;
const fromSources = here.endsWith('.ts');
const workerFile = new URL(`./local-worker${fromSources ? '.ts' : '.js'}`, here);
/**
 * From sources (tsx), the worker registers the TypeScript loader itself, as the runtime's worker pool does.
 * The sandbox runtime is bundled here, once, and handed to each worker (esbuild does not run in them).
 */
const startWorker = (memoryMb: number) => {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb };
  const workerData = { runtime: runtimeBundle() };
  return fromSources
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(workerFile.href)}); })`, { eval: true, resourceLimits, workerData })
    : new Worker(workerFile, { resourceLimits, workerData });
};

interface Pending { worker: Worker; resolve(outcomes: [number, string][]): void; reject(e: Error): void }

export class LocalExecutor implements BatchExecutor {
  readonly transfers: TransferStats = { blobHits: 0, blobMisses: 0, uploadedBytes: 0 };
  private readonly workers: Worker[] = [];
  /** What each worker holds of the blobs, by worker. */
  private readonly held = new Map<Worker, HeldBlobs>();
  private readonly pending = new Map<number, Pending>();
  /** Answers each worker owes. */
  private readonly owed = new Map<Worker, number>();
  private seq = 0;
  private batches = 0;
  private closing = false;

  constructor(size = Math.max(1, os.availableParallelism()), private readonly timeoutMs = 0, private readonly memoryMb = 1024) {
    for (let i = 0; i < size; i++) this.workers.push(this.spawn());
  }

  private spawn(): Worker {
    const w = startWorker(this.memoryMb);
    this.held.set(w, new HeldBlobs());
    w.on('message', (m: { id: number; outcomes?: [number, string][]; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.outcomes!);
    });
    // A worker that dies fails what it owed (its batch rejects) and is replaced for later batches.
    let gone = false;
    const died = (why: string) => {
      if (gone || this.closing) return;
      gone = true;
      this.held.delete(w);
      for (const [id, p] of this.pending) {
        if (p.worker !== w) continue;
        this.pending.delete(id);
        p.reject(new Error(`a local worker thread died: ${why}`));
      }
      const at = this.workers.indexOf(w);
      if (at >= 0) this.workers[at] = this.spawn();
    };
    w.on('error', (e) => died(e.message));
    w.on('exit', (code) => died(`exit code ${code}`));
    w.unref();
    return w;
  }

  /** A worker keeps the process alive only while it owes an answer (ref and unref are not counted: this counts). */
  private send(w: Worker, msg: Omit<LocalRequest, 'id'>): Promise<[number, string][]> {
    if (this.closing) return Promise.reject(new Error('the Distribution was closed'));
    const id = ++this.seq;
    const owed = (this.owed.get(w) ?? 0) + 1;
    this.owed.set(w, owed);
    if (owed === 1) w.ref();
    return new Promise<[number, string][]>((resolve, reject) => {
      this.pending.set(id, { worker: w, resolve, reject });
      w.postMessage({ id, ...msg });
    }).finally(() => {
      const left = (this.owed.get(w) ?? 1) - 1;
      this.owed.set(w, left);
      if (left === 0 && !this.closing) w.unref(); // while closing, referenced until it has stopped
    });
  }

  /** Blobs stay in this process: a local `put` has nothing to send ahead. */
  async upload(): Promise<void> {}

  async start(batch: EncodedBatch, limits: SandboxLimits = {}): Promise<BatchRun> {
    const { graph, blobs } = batch;
    const graphJson = JSON.stringify(graph);
    const taskCount = graph.tasks.length;
    const timeoutMs = limits.timeoutMs ?? this.timeoutMs;
    const key = `local-${++this.batches}`;
    const t0 = performance.now();
    // Chunks from a shared queue: long tasks spread, short ones are not sent one by one.
    const chunk = Math.max(1, Math.min(256, Math.floor(taskCount / (this.workers.length * 8))));
    const cancelled = new Set<number>();
    let next = 0;
    const arrivals = new OutcomeQueue<Arrival[]>();
    const drive = async (w: Worker) => {
      let loaded = false;
      while (next < taskCount) {
        const indexes: number[] = [];
        while (next < taskCount && indexes.length < chunk) {
          if (!cancelled.has(next)) indexes.push(next);
          next++;
        }
        if (indexes.length === 0) continue;
        const msg: Omit<LocalRequest, 'id'> = { key, indexes, timeoutMs };
        if (!loaded) {
          const { send, drop } = this.held.get(w)!.plan(graph.blobs ?? {});
          this.transfers.blobMisses += send.length;
          this.transfers.blobHits += Object.keys(graph.blobs ?? {}).length - send.length;
          Object.assign(msg, { graph: graphJson, blobs: send.map((h) => [h, blobs.get(h)!]), dropBlobs: drop });
        }
        const outs = await this.send(w, msg);
        loaded = true;
        arrivals.push(outs.map(([i, o]) => [i, JSON.parse(o) as TaskOutcome]));
      }
      if (loaded) await this.send(w, { key, drop: true });
    };
    let executionMs = 0;
    Promise.all(this.workers.map(drive)).then(
      () => {
        executionMs = performance.now() - t0;
        arrivals.end();
      },
      (e: unknown) => arrivals.fail(e),
    );
    return {
      arrivals,
      cancel: async (indexes) => {
        for (const i of indexes) cancelled.add(i);
      },
      costs: () => ({ executionMs, dispatchMs: 0, transferMs: 0, roundTrips: 0 }),
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new Error('the Distribution was closed'));
    }
    // Referenced while they stop: an unreferenced worker's exit does not keep the event loop waiting for it.
    await Promise.all(this.workers.map((w) => {
      w.ref();
      return w.terminate();
    }));
  }
}
