/**
 * `Distribution.local()`: runs batches on this machine's worker threads, each task in a node:vm
 * sandbox with the same capture, snapshot and diff as the service — for offline development and to
 * measure what distribution costs.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import type { BatchExecutor, BatchRun } from './executor.js';
import type { TaskOutcome } from './graph-format.js';
import type { SandboxLimits } from './sandbox-pool.js';

const here = import.meta.url;
const fromSources = here.endsWith('.ts');
const workerFile = new URL(`./local-worker${fromSources ? '.ts' : '.js'}`, here);
/** From sources (tsx), the worker registers the TypeScript loader itself, as the runtime's worker pool does. */
const startWorker = (memoryMb: number) => {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb };
  return fromSources
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(workerFile.href)}); })`, { eval: true, resourceLimits })
    : new Worker(workerFile, { resourceLimits });
};

interface Pending { worker: Worker; resolve(outcomes: [number, string][]): void; reject(e: Error): void }

export class LocalExecutor implements BatchExecutor {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private batches = 0;
  private closing = false;

  constructor(size = Math.max(1, os.availableParallelism()), private readonly timeoutMs = 0, private readonly memoryMb = 1024) {
    for (let i = 0; i < size; i++) this.workers.push(this.spawn());
  }

  private spawn(): Worker {
    const w = startWorker(this.memoryMb);
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

  /** A worker keeps the process alive only while it owes an answer. */
  private send(w: Worker, msg: object): Promise<[number, string][]> {
    const id = ++this.seq;
    w.ref();
    return new Promise<[number, string][]>((resolve, reject) => {
      this.pending.set(id, { worker: w, resolve, reject });
      w.postMessage({ id, ...msg });
    }).finally(() => w.unref());
  }

  async start(graphJson: string, taskCount: number, limits: SandboxLimits = {}): Promise<BatchRun> {
    const timeoutMs = limits.timeoutMs ?? this.timeoutMs;
    const key = `local-${++this.batches}`;
    const t0 = performance.now();
    // Chunks from a shared queue: long tasks spread, short ones are not sent one by one.
    const chunk = Math.max(1, Math.min(256, Math.floor(taskCount / (this.workers.length * 8))));
    let next = 0;
    let cancelled = false;
    const all: [number, string][] = [];
    const drive = async (w: Worker) => {
      let loaded = false;
      while (next < taskCount) {
        const from = next;
        next = Math.min(taskCount, next + chunk);
        const indexes = Array.from({ length: next - from }, (_, i) => from + i);
        all.push(...(await this.send(w, { key, graph: loaded ? undefined : graphJson, indexes, timeoutMs })));
        loaded = true;
      }
      await this.send(w, { key, drop: true });
    };
    const done = Promise.all(this.workers.map(drive)).then(() => performance.now() - t0);
    return {
      outcomes: async () => {
        const executionMs = await done;
        if (cancelled) throw new Error(`batch ${key} was cancelled`);
        const outcomes = new Array<TaskOutcome>(taskCount);
        for (const [i, o] of all) outcomes[i] = JSON.parse(o) as TaskOutcome;
        return { outcomes, costs: { executionMs, dispatchMs: 0, transferMs: 0 } };
      },
      cancel: async () => {
        cancelled = true;
        next = taskCount;
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
