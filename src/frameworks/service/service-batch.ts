/**
 * A batch as the service follows it: which tasks' outcomes have come (a task run twice after a node
 * failed comes twice: the first counts), which were cancelled, the chunks received (kept so that a
 * client whose stream broke can read them again), and the streams of the clients reading them. It is
 * over once every task has an outcome or was cancelled, or when its job failed.
 */
import type { Writable } from 'node:stream';
import type { BatchCosts } from './executor.js';
import type { CancelledIndexes } from './job-channel.js';
import type { PackedChunk } from './outcome-chunks.js';
import type { JobBatch } from './service-job.js';
import { frame } from './wire-format.js';

/** A frame of a batch's outcome stream. */
export type StreamFrame =
  | { batch: string; tasks: number; serverMs: number }
  | { c: Pick<PackedChunk, 'i' | 'z'>[] }
  | { end: 'done' | 'failed'; costs: Partial<BatchCosts>; error?: string };

export class ServiceBatch {
  state: 'running' | 'done' | 'failed' = 'running';
  error: string | undefined;
  readonly costs: Partial<BatchCosts> & { dispatchMs: number; executionMs: number; diffingMs: number; taskMs: number } = { dispatchMs: 0, executionMs: 0, diffingMs: 0, taskMs: 0 };
  /** The chunks that brought new outcomes, in order (the stream replays them from any position). */
  readonly chunks: Pick<PackedChunk, 'i' | 'z'>[] = [];
  private readonly received: Uint8Array;
  private readonly cancelled = new Set<number>();
  private left: number;
  private readonly streams = new Set<Writable>();
  private job: JobBatch | undefined;
  private startedAt = 0;
  /** The sandboxes' time its chunks reported, duplicates included (what the tenant's CPU quota counts). */
  cpuMs = 0;
  doneAt = 0;

  constructor(readonly id: string, readonly tasks: number, private readonly onOver: (batch: ServiceBatch) => void) {
    this.received = new Uint8Array(tasks);
    this.left = tasks;
  }

  /** Every task of the batch was cancelled (for the latency histogram's `cancelled`). */
  get cancelledAll(): boolean {
    return this.cancelled.size === this.tasks;
  }

  /** The batch is on the job now. */
  posted(job: JobBatch, dispatchMs: number): void {
    this.job = job;
    this.costs.dispatchMs = dispatchMs;
    this.startedAt = performance.now();
    if (this.left === 0) this.over('done');
  }

  /** Chunks from the job: those with new outcomes go to the streams; returns the CPU ms they report. */
  onChunks(chunks: PackedChunk[]): number {
    let cpuMs = 0;
    const fresh: Pick<PackedChunk, 'i' | 'z'>[] = [];
    for (const c of chunks) {
      cpuMs += c.ms;
      this.cpuMs += c.ms;
      let added = 0;
      for (const i of c.i) {
        if (!Number.isInteger(i) || i < 0 || i >= this.tasks || this.received[i] || this.cancelled.has(i)) continue;
        this.received[i] = 1;
        added++;
      }
      if (added === 0) continue;
      this.left -= added;
      this.costs.taskMs += c.ms;
      this.costs.diffingMs += c.dms;
      fresh.push({ i: c.i, z: c.z });
    }
    if (fresh.length > 0 && this.state === 'running') {
      this.chunks.push(...fresh);
      this.write({ c: fresh });
    }
    if (this.left === 0 && this.job) this.over('done');
    return cpuMs;
  }

  /** Cancels tasks without an outcome yet: the job skips or stops them; resolves with how many. */
  async cancel(indexes: CancelledIndexes): Promise<number> {
    if (this.state !== 'running') return 0;
    const list = indexes === 'all' ? Array.from({ length: this.tasks }, (_, i) => i) : indexes;
    let n = 0;
    for (const i of list) {
      if (!Number.isInteger(i) || i < 0 || i >= this.tasks || this.received[i] || this.cancelled.has(i)) continue;
      this.cancelled.add(i);
      n++;
    }
    this.left -= n;
    if (n > 0) await this.job?.cancel(this.cancelled.size === this.tasks ? 'all' : [...this.cancelled]);
    if (this.left === 0 && this.job) this.over('done');
    return n;
  }

  /** The job could not run the batch. */
  fail(error: Error): void {
    if (this.state !== 'running') return;
    this.error = error.message;
    this.over('failed');
  }

  /** Streams the batch to a client from chunk `from` on: what came already, then what comes, then the end. */
  stream(out: Writable, from = 0): void {
    for (const c of this.chunks.slice(from)) out.write(frame({ c: [c] } satisfies StreamFrame));
    if (this.state !== 'running') {
      out.end(frame(this.endFrame()));
      return;
    }
    this.streams.add(out);
    out.on('close', () => this.streams.delete(out));
  }

  private endFrame(): StreamFrame {
    return { end: this.state === 'done' ? 'done' : 'failed', costs: this.costs, ...(this.error !== undefined ? { error: this.error } : {}) };
  }

  private write(f: StreamFrame): void {
    const bytes = frame(f);
    for (const s of this.streams) s.write(bytes);
  }

  private over(state: 'done' | 'failed'): void {
    if (this.state !== 'running') return;
    this.state = state;
    this.doneAt = Date.now();
    this.costs.executionMs = performance.now() - this.startedAt;
    const end = frame(this.endFrame());
    for (const s of this.streams) s.end(end);
    this.streams.clear();
    void this.job?.finish();
    this.onOver(this);
  }
}
