/**
 * A node's part in the service's long-lived job, beside the task pool it builds on (service-kind.ts):
 * it watches the batches the service posts in the coordination service (job-channel.ts), tells the
 * feeder task of each when the feeder runs on this node, answers a worker's request for a batch's graph
 * and blobs (obtained once per node from the data plane, and only the blobs that worker lacks), tells the
 * workers of cancellations and of batches that are over, and writes what the tasks return for the
 * service to read: a chunk as it comes, or, while a write is under way, the chunks that came meanwhile in
 * the next one.
 */
import { randomBytes } from 'node:crypto';
import { isCoordError } from '../../coord/errors.js';
import { joinPath } from '../../coord/paths.js';
import { watchChildren, watchData, type WatchHandle } from '../../coord/watch.js';
import type { MemberContext } from '../../runtime/kinds/job-kind.js';
import { log } from '../../util/log.js';
import { channelPaths, GROUP_BYTES, type BatchDescriptor, type CancelledIndexes, type OutcomeGroup } from './job-channel.js';
import type { KindToWorker, TaskToKind } from './service-task.js';
import type { PackedChunk } from './outcome-chunks.js';
import { pack, unpack } from './wire-format.js';

interface MemberBatch {
  id: string;
  descriptor: Promise<BatchDescriptor | undefined>;
  /** The graph and the blobs' bytes, obtained once for this node. */
  prepared?: Promise<{ graph: string; blobs: Map<string, Uint8Array> } | undefined>;
  cancelWatch?: WatchHandle;
  cancelled?: CancelledIndexes;
  /** Chunks waiting for the write under way, and whether one is. */
  pending: PackedChunk[];
  writing: boolean;
}

/** How long a chunk waits for others from this node's workers before it is written (ms). */
const GATHER_MS = 2;

const pendingBytes = (batch: MemberBatch) => batch.pending.reduce((n, c) => n + c.z.length, 0);

export class ServiceMember {
  private readonly paths: ReturnType<typeof channelPaths>;
  private readonly batches = new Map<string, MemberBatch>();
  /** Batches this node saw end (a late request for one is told so). */
  private readonly over = new Set<string>();
  private feederSlot: number | undefined;
  private watch: WatchHandle | undefined;
  private stopped = false;
  private parts = 0;

  constructor(private readonly ctx: MemberContext) {
    this.paths = channelPaths(serviceDir(ctx.paths.base));
  }

  start(): void {
    this.watch = watchChildren(this.ctx.client, this.paths.batches, (children) => this.onBatches(children ?? []));
  }

  stop(): void {
    this.stopped = true;
    this.watch?.close();
    for (const b of this.batches.values()) b.cancelWatch?.close();
  }

  private post(slot: number, body: KindToWorker): void {
    this.ctx.workers.post?.(slot, body);
  }

  private postAll(body: KindToWorker): void {
    for (let slot = 0; slot < this.ctx.workers.size; slot++) this.post(slot, body);
  }

  private onBatches(children: string[]): void {
    if (this.stopped) return;
    const now = new Set(children);
    for (const id of [...children].sort()) if (!this.batches.has(id) && !this.over.has(id)) this.track(id);
    for (const id of [...this.batches.keys()]) if (!now.has(id)) this.untrack(id);
  }

  private track(id: string): MemberBatch {
    const descriptor = this.ctx.client.getData(this.paths.batch(id)).then(
      (d) => unpack<BatchDescriptor>(d.data),
      (e: unknown) => {
        if (isCoordError(e, 'NO_NODE')) return undefined;
        throw e;
      },
    );
    descriptor.catch(() => undefined);
    const batch: MemberBatch = { id, descriptor, pending: [], writing: false };
    this.batches.set(id, batch);
    batch.prepared = this.prepare(batch);
    batch.prepared.catch(() => undefined);
    batch.cancelWatch = watchData(this.ctx.client, this.paths.cancelOf(id), (d) => {
      if (!d || this.stopped) return;
      batch.cancelled = unpack<{ indexes: CancelledIndexes }>(d.data).indexes;
      this.postAll({ type: 'cancel', id, indexes: batch.cancelled });
    });
    void descriptor.then((d) => {
      if (d && this.feederSlot !== undefined && this.batches.has(id)) this.post(this.feederSlot, { type: 'batch', id, tasks: d.tasks });
    });
    return batch;
  }

  private untrack(id: string): void {
    const batch = this.batches.get(id);
    this.batches.delete(id);
    batch?.cancelWatch?.close();
    this.over.add(id);
    if (this.over.size > 10_000) this.over.delete(this.over.values().next().value!);
    this.postAll({ type: 'drop', id });
  }

  /** The batch's graph and blobs on this node (undefined when the batch is gone). */
  private async prepare(batch: MemberBatch): Promise<{ graph: string; blobs: Map<string, Uint8Array> } | undefined> {
    const d = await batch.descriptor;
    if (!d) return undefined;
    const data = this.ctx.data;
    const jobId = this.ctx.spec.id;
    const obtain = async (ref: { hash: string; size: number }, what: string): Promise<Uint8Array> => {
      if (!data) throw new Error(`node ${this.ctx.nodeId} has no data plane for ${what}`);
      return data.obtain(ref, jobId, what);
    };
    const graph = d.graph ?? Buffer.from(await obtain(d.graphRef!, `the graph of batch ${batch.id}`)).toString('utf8');
    const blobs = new Map<string, Uint8Array>();
    await Promise.all(Object.entries(d.blobs).map(async ([hash, ref]) => blobs.set(hash, await obtain(ref, `blob ${hash.slice(0, 12)} of batch ${batch.id}`))));
    return { graph, blobs };
  }

  onTask(slot: number, body: TaskToKind): void {
    if (this.stopped) return;
    switch (body.type) {
      case 'feeder':
        this.feederSlot = slot;
        void this.tellFeeder(slot, body.seq);
        break;
      case 'need':
        void this.load(slot, body.id, new Set(body.have)).catch((e: unknown) => log.warn('service', `batch ${body.id}: could not give a worker its graph`, e));
        break;
      case 'outcomes':
        this.outcome(body.id, body.chunk);
        break;
    }
  }

  /** Tells a feeder that just started here of the batches after the last it took. */
  private async tellFeeder(slot: number, seq: string): Promise<void> {
    for (const batch of [...this.batches.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
      if (batch.id <= seq) continue;
      const d = await batch.descriptor;
      if (d && this.batches.has(batch.id)) this.post(slot, { type: 'batch', id: batch.id, tasks: d.tasks });
    }
  }

  /** Gives a worker a batch's graph and the blobs it does not hold (or tells it the batch is over). */
  private async load(slot: number, id: string, have: Set<string>): Promise<void> {
    const batch = this.batches.get(id) ?? (this.over.has(id) ? undefined : this.track(id));
    const prepared = await batch?.prepared;
    const d = await batch?.descriptor;
    if (!batch || !prepared || !d || !this.batches.has(id)) return this.post(slot, { type: 'drop', id });
    const blobs = [...prepared.blobs].filter(([hash]) => !have.has(hash));
    this.post(slot, { type: 'load', id, graph: prepared.graph, limits: d.limits, blobs });
    if (batch.cancelled) this.post(slot, { type: 'cancel', id, indexes: batch.cancelled });
  }

  private outcome(id: string, chunk: PackedChunk): void {
    const batch = this.batches.get(id) ?? (this.over.has(id) ? undefined : this.track(id));
    if (!batch) return; // the batch is over: the service has every outcome
    batch.pending.push(chunk);
    // A short delay gathers the chunks of this node's workers into one write (one znode for the service to read).
    if (batch.pending.length === 1 && !batch.writing) setTimeout(() => void this.flush(batch), GATHER_MS);
    else if (pendingBytes(batch) >= GROUP_BYTES / 2) void this.flush(batch);
  }

  /** Writes the chunks waiting, as groups of at most GROUP_BYTES (a larger chunk in parts), one write at a time per batch. */
  private async flush(batch: MemberBatch): Promise<void> {
    if (batch.writing) return;
    batch.writing = true;
    try {
      while (batch.pending.length > 0 && !this.stopped) {
        const group: PackedChunk[] = [];
        let bytes = 0;
        const size = (c: PackedChunk) => c.z.length + 8 * c.i.length + 32;
        while (batch.pending.length > 0 && (group.length === 0 || bytes + size(batch.pending[0]!) <= GROUP_BYTES)) {
          const c = batch.pending.shift()!;
          group.push(c);
          bytes += size(c);
        }
        const writes: OutcomeGroup[] = bytes <= GROUP_BYTES ? [{ chunks: group }] : this.inParts(group[0]!);
        for (const w of writes) await this.ctx.client.create(joinPath(this.paths.outOf(batch.id), 'c-'), pack(w), 'persistent_sequential');
      }
    } catch (e) {
      // The batch is over (its znodes are gone) or the session ended: nobody waits for these outcomes.
      if (!isCoordError(e, 'NO_NODE')) log.warn('service', `batch ${batch.id}: could not write outcomes`, e);
      batch.pending = [];
    } finally {
      batch.writing = false;
    }
  }

  /** A chunk too large for one znode, in parts the service joins again. */
  private inParts(chunk: PackedChunk): OutcomeGroup[] {
    const key = `${this.ctx.nodeId}-${++this.parts}-${randomBytes(3).toString('hex')}`;
    const n = Math.ceil(chunk.z.length / GROUP_BYTES);
    const { z, ...rest } = chunk;
    return Array.from({ length: n }, (_, k) => ({ part: { key, k, n }, bytes: z.subarray(k * GROUP_BYTES, (k + 1) * GROUP_BYTES), ...(k === 0 ? { chunk: rest } : {}) }));
  }
}

/** Where the service's channel lives under a job's znode. */
export function serviceDir(jobBase: string): string {
  return joinPath(jobBase, 'service');
}
