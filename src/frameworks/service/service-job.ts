/**
 * The service's one long-lived job on its cluster, which takes batches as work (instead of a job per
 * batch, whose life cycle a short batch paid in full). Started on the first batch, it serves every
 * connection's batches; after `idleReleaseMs` without any it is cancelled, freeing the cluster's nodes
 * (a node serves one job at a time), and the next batch starts a new one. A batch is posted through the
 * job's channel (job-channel.ts): its blobs shared with the job once (Cluster.share), its descriptor
 * written, its outcomes read as members write them. If the job ends while batches run, they fail with
 * its reason.
 */
import { isCoordError } from '../../coord/errors.js';
import { deleteRecursive } from '../../coord/tree-ops.js';
import { watchChildren, type WatchHandle } from '../../coord/watch.js';
import { joinPath } from '../../coord/paths.js';
import type { BlobRef } from '../../data/blob-directory.js';
import type { Cluster, JobHandle } from '../../runtime/client/cluster.js';
import { requestJob } from '../../runtime/client/job-requests.js';
import type { KindRef } from '../../runtime/job/job-spec.js';
import type { TaskRef } from '../../runtime/worker/task.js';
import { log } from '../../util/log.js';
import type { CaptureGraph } from './graph-format.js';
import { batchId, channelPaths, INLINE_GRAPH_BYTES, type BatchDescriptor, type CancelledIndexes, type OutcomeGroup } from './job-channel.js';
import type { SandboxLimits } from './sandbox-pool.js';
import type { FeederState } from './service-task.js';
import { pack, unpack } from './wire-format.js';
import type { PackedChunk } from './outcome-chunks.js';

export interface ServiceJobOptions {
  cluster: Cluster;
  taskRef: TaskRef;
  kindRef: KindRef;
  /** End the job after this long without a batch (ms; default 60 s). */
  idleReleaseMs?: number;
  /** How long the job may take to start, e.g. waiting for a free node (ms; default 60 s). */
  startTimeoutMs?: number;
}

/** What the service hears of a posted batch. */
export interface JobBatchListener {
  /** Outcome chunks as members wrote them. */
  onChunks(chunks: PackedChunk[]): void;
  /** The job ended (or could not start) before the batch was over. */
  onFailure(error: Error): void;
}

/** A batch posted to the job. */
export interface JobBatch {
  readonly id: string;
  cancel(indexes: CancelledIndexes): Promise<void>;
  /** The batch is over (every outcome in, or cancelled): its znodes go, members drop it. */
  finish(): Promise<void>;
}

interface RunningJob {
  handle: JobHandle;
  paths: ReturnType<typeof channelPaths>;
  /** Blobs shared with this job, by hash. */
  shared: Map<string, Promise<BlobRef>>;
  batches: Map<string, { listener: JobBatchListener; watch: WatchHandle }>;
}

export class ServiceJob {
  private job: Promise<RunningJob> | undefined;
  /** Which job is current: bumped when one is started, released or ends. */
  private generation = 0;
  private seq = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: ServiceJobOptions) {}

  /** The job's id (starting it if none runs): for the dashboard and tests. */
  async jobId(): Promise<string> {
    return (await this.running()).handle.id;
  }

  private running(): Promise<RunningJob> {
    if (this.closed) return Promise.reject(new Error('the service is closing'));
    if (!this.job) {
      const gen = ++this.generation;
      const started = this.startJob(gen);
      this.job = started;
      started.catch(() => {
        if (this.job === started) this.job = undefined;
      });
    }
    return this.job;
  }

  private async startJob(gen: number): Promise<RunningJob> {
    const { cluster, taskRef, kindRef } = this.opts;
    const root: FeederState = { t: 'feeder', seq: '' };
    const handle = await cluster.submit(taskRef, root, { kind: kindRef });
    const job: RunningJob = { handle, paths: channelPaths(''), shared: new Map(), batches: new Map() };
    void handle.outcome().then((o) => this.ended(gen, job, o.status === 'failed' ? `failed: ${o.error}` : o.status));
    try {
      const { dir } = (await requestJob(cluster.coordination, handle.id, 'hello', null, { timeoutMs: this.opts.startTimeoutMs ?? 60_000 })) as { dir: string };
      job.paths = channelPaths(dir);
      // The claim: while this ephemeral znode lives (this service's session), the job runs; then it ends.
      await cluster.coordination.create(job.paths.owner, undefined, 'ephemeral');
      log.info('service', `job ${handle.id} takes the service's batches`);
      return job;
    } catch (e) {
      await handle.cancel().catch(() => undefined);
      throw new Error(`the service's job ${handle.id} did not start: ${(e as Error).message}`);
    }
  }

  /** The job ended: its batches fail (unless the service released it, idle); the next batch starts another. */
  private ended(gen: number, job: RunningJob, how: string): void {
    if (gen !== this.generation) return; // released by the service, or replaced already
    this.job = undefined;
    this.generation++;
    for (const [id, b] of job.batches) {
      b.watch.close();
      b.listener.onFailure(new Error(`the service's job ${job.handle.id} ${how} while batch ${id} ran`));
    }
    job.batches.clear();
  }

  /** Posts a batch: its blobs shared, its descriptor written; outcomes reach `listener` as they come. */
  async post(graph: CaptureGraph, blobs: ReadonlyMap<string, Uint8Array>, limits: SandboxLimits, listener: JobBatchListener): Promise<JobBatch> {
    clearTimeout(this.idleTimer);
    const job = await this.running();
    const { cluster } = this.opts;
    const jobId = job.handle.id;
    const refs: Record<string, BlobRef> = {};
    await Promise.all(Object.keys(graph.blobs ?? {}).map(async (hash) => {
      let ref = job.shared.get(hash);
      if (!ref) {
        const bytes = blobs.get(hash);
        if (!bytes) throw new Error(`blob ${hash.slice(0, 12)} is named by the batch but was not given`);
        ref = cluster.share(bytes, jobId, `service blob ${hash.slice(0, 12)}`);
        job.shared.set(hash, ref);
        ref.catch(() => job.shared.delete(hash));
      }
      refs[hash] = await ref;
    }));
    const text = JSON.stringify(graph);
    const descriptor: BatchDescriptor = { tasks: graph.tasks.length, limits, blobs: refs };
    if (text.length <= INLINE_GRAPH_BYTES) descriptor.graph = text;
    else descriptor.graphRef = await cluster.share(Buffer.from(text, 'utf8'), jobId, 'service batch graph');
    const id = batchId(++this.seq);
    const client = cluster.coordination;
    await client.create(job.paths.outOf(id));
    const read = new Set<string>();
    const parts = new Map<string, { bytes: Uint8Array[]; chunk?: Omit<PackedChunk, 'z'> }>();
    const watch = watchChildren(client, job.paths.outOf(id), (children) => {
      for (const name of (children ?? []).sort()) {
        if (read.has(name)) continue;
        read.add(name);
        const at = joinPath(job.paths.outOf(id), name);
        void client.getData(at).then((d) => {
          const group = unpack<OutcomeGroup>(d.data);
          if ('chunks' in group) listener.onChunks(group.chunks);
          else {
            const p = parts.get(group.part.key) ?? { bytes: new Array<Uint8Array>(group.part.n) };
            p.bytes[group.part.k] = group.bytes;
            if (group.chunk) p.chunk = group.chunk;
            parts.set(group.part.key, p);
            if (p.chunk && p.bytes.filter(Boolean).length === group.part.n) {
              parts.delete(group.part.key);
              listener.onChunks([{ ...p.chunk, z: Buffer.concat(p.bytes) }]);
            }
          }
          return client.delete(at);
        }).catch((e: unknown) => {
          if (!isCoordError(e, 'NO_NODE')) log.warn('service', `batch ${id}: could not read outcomes ${name}`, e);
        });
      }
    });
    job.batches.set(id, { listener, watch });
    await client.create(job.paths.batch(id), pack(descriptor));
    return {
      id,
      cancel: async (indexes) => {
        const data = pack({ indexes });
        try {
          await client.setData(job.paths.cancelOf(id), data);
        } catch (e) {
          if (!isCoordError(e, 'NO_NODE')) throw e;
          await client.create(job.paths.cancelOf(id), data).catch((err: unknown) => {
            if (isCoordError(err, 'NODE_EXISTS')) return client.setData(job.paths.cancelOf(id), data);
            throw err;
          });
        }
      },
      finish: async () => {
        watch.close();
        job.batches.delete(id);
        for (const path of [job.paths.batch(id), job.paths.cancelOf(id), job.paths.outOf(id)]) {
          await deleteRecursive(client, path).catch((e: unknown) => log.debug('service', `batch ${id}: ${path} not removed`, e));
        }
        this.armIdle(job);
      },
    };
  }

  /** With no batch left, the job ends after the idle time (its nodes go back to the cluster). */
  private armIdle(job: RunningJob): void {
    if (job.batches.size > 0) return;
    clearTimeout(this.idleTimer);
    const gen = this.generation;
    this.idleTimer = setTimeout(() => {
      if (job.batches.size > 0 || gen !== this.generation) return;
      this.job = undefined;
      this.generation++;
      log.info('service', `job ${job.handle.id} released after ${this.opts.idleReleaseMs ?? 60_000} ms without a batch`);
      void job.handle.cancel();
    }, this.opts.idleReleaseMs ?? 60_000);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const job = this.job;
    this.job = undefined;
    if (!job) return;
    const running = await job.catch(() => undefined);
    if (!running) return;
    for (const b of running.batches.values()) b.watch.close();
    await running.handle.cancel().catch(() => undefined);
  }
}
