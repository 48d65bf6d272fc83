/**
 * The task type of the service's long-lived job (service-kind.ts). Its root task is the **feeder**:
 * it waits for batches (the node's kind tells it of them) and runs each as a **range** of the batch's
 * task indexes, split in halves when other workers want work (stealing, migration and crash recovery as
 * for any task). A batch that arrives while the feeder runs one is spawned as a range task of its own,
 * so idle workers start it at once. A worker obtains a batch's graph and blobs from its node's kind the
 * first time it runs a range of it (and keeps the blobs: a later batch over the same data needs none);
 * each task runs in an isolated-vm sandbox process of this worker thread; the outcomes of each chunk of
 * tasks go to the kind (`ctx.send`), which hands them to the service. A task run twice (a range recovered
 * after its node failed) sends its outcome twice: the service keeps the first.
 */
import { CONTROL_CHECK_EVERY, defineTask, type TaskContext } from '../../runtime/worker/task.js';
import type { CaptureGraph } from './graph-format.js';
import { SandboxPool, type BatchBlobs, type SandboxLimits } from './sandbox-pool.js';
import { packChunk, type PackedChunk } from './outcome-chunks.js';
import { outcomeTimes } from './batch-cost-event.js';
import type { CancelledIndexes } from './job-channel.js';

/** A batch's task indexes [lo, hi) still owed. */
export interface Range { id: string; lo: number; hi: number }

/**
 * The root task: the last batch it took (`seq`, a batch id), the range it runs, if any, and how long it
 * waits idle before it hands over to a successor (`wait`, ms; see runFeeder).
 */
export interface FeederState { t: 'feeder'; seq: string; run?: Range; wait?: number }
export type ServiceTaskState = FeederState | ({ t: 'range' } & Range);

/** What a task sends its node's kind. */
export type TaskToKind =
  | { type: 'feeder'; seq: string }
  | { type: 'need'; id: string; have: string[] }
  | { type: 'outcomes'; id: string; chunk: PackedChunk };

/** What the kind posts to a worker. */
export type KindToWorker =
  | { type: 'batch'; id: string; tasks: number }
  | { type: 'load'; id: string; graph: string; limits: SandboxLimits; blobs: [string, Uint8Array][] }
  | { type: 'cancel'; id: string; indexes: CancelledIndexes }
  | { type: 'drop'; id: string };

/** A chunk of tasks should take about this long (ms): few messages for tiny tasks, a split point soon for idle workers. */
const CHUNK_MS = 10;
/** How often a task waiting for the kind (a batch, its graph) looks at its messages (ms). */
const WAIT_MS = 1;
/** How often an idle feeder looks for a batch once it has waited a while (ms). */
const IDLE_WAIT_MS = 4;
/** How often a range waiting for a long task offers the rest of its indexes to idle workers (ms). */
const SPLIT_POLL_MS = 5;
/** Blobs a worker keeps for later batches (least recently used dropped beyond). */
const BLOB_BUDGET = 512 * 1024 * 1024;

interface LoadedBatch {
  graph: string;
  codes: CaptureGraph['codes'];
  packages: string[];
  limits: SandboxLimits;
  blobs: BatchBlobs;
}

/**
 * This worker thread's view of the job: what the kind told it (every task on this worker shares it). A
 * worker serves one job at a time; another job's batch ids mean other batches, so its view starts afresh
 * (the blobs stay: they are named by their content).
 */
const worker = {
  job: undefined as string | undefined,
  pool: undefined as SandboxPool | undefined,
  loaded: new Map<string, LoadedBatch>(),
  blobs: new Map<string, Uint8Array>(),
  cancelled: new Map<string, CancelledIndexes>(),
  dropped: new Set<string>(),
  notices: [] as { id: string; tasks: number }[],
  asked: new Set<string>(),
};

/** Starts this worker's view afresh when a task of another job runs here. */
function enter(jobId: string): void {
  if (worker.job === jobId) return;
  worker.job = jobId;
  worker.loaded.clear();
  worker.cancelled.clear();
  worker.dropped.clear();
  worker.asked.clear();
  worker.notices = [];
}

/** The sandbox pool's key of a batch: unique across jobs (a process keeps a loaded batch by its key). */
const poolKey = (id: string) => `${worker.job}:${id}`;

/** Takes in what the kind posted (to whichever task of this worker reads it first). */
function absorb(messages: unknown[]): void {
  for (const raw of messages) {
    const m = raw as KindToWorker;
    switch (m.type) {
      case 'batch':
        if (!worker.dropped.has(m.id) && !worker.notices.some((n) => n.id === m.id)) worker.notices.push({ id: m.id, tasks: m.tasks });
        break;
      case 'load': {
        for (const [hash, bytes] of m.blobs) {
          worker.blobs.delete(hash);
          worker.blobs.set(hash, bytes);
        }
        const graph = JSON.parse(m.graph) as CaptureGraph;
        const needed = graph.blobs ?? {};
        worker.loaded.set(m.id, {
          graph: m.graph, codes: graph.codes, packages: (graph.packages ?? []).map((p) => p.code ?? ''), limits: m.limits,
          blobs: { needed, bytes: (h) => worker.blobs.get(h)! },
        });
        worker.asked.delete(m.id);
        trimBlobs();
        break;
      }
      case 'cancel':
        worker.cancelled.set(m.id, m.indexes);
        worker.pool?.cancel(poolKey(m.id), m.indexes);
        break;
      case 'drop':
        worker.loaded.delete(m.id);
        worker.cancelled.delete(m.id);
        worker.asked.delete(m.id);
        worker.dropped.add(m.id);
        if (worker.dropped.size > 1000) worker.dropped.delete(worker.dropped.values().next().value!);
        worker.notices = worker.notices.filter((n) => n.id !== m.id);
        worker.pool?.forget(poolKey(m.id));
        break;
    }
  }
}

/** Drops the least recently loaded blobs no loaded batch names, beyond the budget. */
function trimBlobs(): void {
  let bytes = 0;
  for (const b of worker.blobs.values()) bytes += b.length;
  if (bytes <= BLOB_BUDGET) return;
  const inUse = new Set([...worker.loaded.values()].flatMap((b) => Object.keys(b.blobs.needed)));
  for (const [hash, b] of worker.blobs) {
    if (bytes <= BLOB_BUDGET) break;
    if (inUse.has(hash)) continue;
    worker.blobs.delete(hash);
    bytes -= b.length;
  }
}

function isCancelled(id: string, index: number): boolean {
  const c = worker.cancelled.get(id);
  return c === 'all' || (c !== undefined && c.includes(index));
}

const pause = (ms = WAIT_MS) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** An idle feeder hands over to a successor after this long, doubling while idle up to FEEDER_MAX_WAIT_MS. */
const FEEDER_WAIT_MS = 100;
const FEEDER_MAX_WAIT_MS = 5_000;

/**
 * The runtime consults its control words on every CONTROL_CHECK_EVERY-th split point or migration check
 * (cheap for tasks that offer one per tiny unit of work); a batch offers one per chunk, so it calls that many
 * times for one real check.
 */
function checked(probe: () => boolean): boolean {
  for (let i = 0; i < CONTROL_CHECK_EVERY; i++) if (probe()) return true;
  return false;
}

type Ctx = TaskContext<never, unknown>;

/** The batch's graph and blobs, asked of the kind once; undefined when the batch is over or this task must stop. */
async function batchOf(id: string, ctx: Ctx): Promise<LoadedBatch | 'migrate' | undefined> {
  for (;;) {
    absorb(ctx.receive());
    if (worker.dropped.has(id) || ctx.cancelled()) return undefined;
    const batch = worker.loaded.get(id);
    if (batch) return batch;
    if (checked(() => ctx.shouldMigrate())) return 'migrate';
    if (!worker.asked.has(id)) {
      worker.asked.add(id);
      ctx.send({ type: 'need', id, have: [...worker.blobs.keys()] } satisfies TaskToKind);
    }
    await pause();
  }
}

/**
 * The first index of a running range not yet sent to its sandbox: a chunk is sent while the one
 * before it runs, so that the sandbox never waits for this thread. The range's state stays what has
 * been reported (`lo` onwards is owed, so a migrated or recovered range runs a chunk in flight again);
 * a split gives away only indexes not sent.
 */
const sentUpTo = new WeakMap<Range, number>();

/**
 * Runs a range: 'done' when every index is reported (or cancelled), 'migrate' when the task must move
 * (the range keeps what is owed), 'stopped' when the batch is over or the job ended. `between` runs
 * before each chunk (the feeder spawns the batches it hears of there).
 */
async function runRange(range: Range, ctx: Ctx, between?: () => void): Promise<'done' | 'migrate' | 'stopped'> {
  const batch = await batchOf(range.id, ctx);
  if (batch === 'migrate') return 'migrate';
  if (batch === undefined) return 'stopped';
  const pool = (worker.pool ??= new SandboxPool());
  const lane = {}; // this range's chunks go to one sandbox process, the next queued behind the running one
  let chunk = 1;
  let lastDone = Date.now();
  // Once a chunk proved short, the next is sent while one runs; long tasks go one by one (a cancel then leaves none queued).
  let pipelined = false;
  type Sent = { indexes: number[]; upTo: number; at: number; outs: Promise<Map<number, string>> };
  const report = async (sent: Sent) => {
    let outs: Map<number, string>;
    try {
      outs = await sent.outs;
    } catch (e) {
      // The sandbox pool itself failed (not a task): every task of the chunk fails, naming why.
      const failed = JSON.stringify({ ok: false, err: { name: 'SandboxError', message: `the sandbox could not run this task: ${(e as Error).message}` } });
      outs = new Map(sent.indexes.map((i) => [i, failed]));
    }
    const done = sent.indexes.filter((i) => outs.has(i)).map((i): [number, string] => [i, outs.get(i)!]);
    if (done.length > 0) ctx.send({ type: 'outcomes', id: range.id, chunk: packChunk(done, outcomeTimes) } satisfies TaskToKind);
    range.lo = sent.upTo;
    // Short tasks go to the sandbox in chunks of about CHUNK_MS (fewer messages); long ones one by one.
    const now = Date.now();
    const elapsed = now - Math.max(sent.at, lastDone);
    lastDone = now;
    pipelined = elapsed <= CHUNK_MS * 2;
    if (elapsed < CHUNK_MS / 2) chunk = Math.min(256, chunk * 2);
    else if (elapsed > CHUNK_MS * 2) chunk = Math.max(1, chunk >> 1);
  };
  const over = () => ctx.cancelled() || worker.dropped.has(range.id) || worker.cancelled.get(range.id) === 'all';
  /**
   * Waits for a chunk sent while offering what is not sent yet to idle workers (a long task does not keep
   * the tasks behind it waiting); false if the batch or the job is over meanwhile.
   */
  const settled = async (sent: Sent): Promise<boolean> => {
    let done = false;
    void sent.outs.finally(() => (done = true)).catch(() => undefined);
    for (let waited = 0; !done; waited++) {
      await Promise.race([sent.outs.catch(() => undefined), pause(waited < 10 ? WAIT_MS : SPLIT_POLL_MS)]);
      if (done) break;
      absorb(ctx.receive());
      if (over()) return false;
      checked(() => ctx.potentialSplit());
    }
    return true;
  };
  let running: Sent | undefined;
  try {
    sentUpTo.set(range, range.lo);
    while (sentUpTo.get(range)! < range.hi) {
      absorb(ctx.receive());
      if (over()) {
        running?.outs.catch(() => undefined);
        return 'stopped';
      }
      if (checked(() => ctx.shouldMigrate())) {
        if (running) await report(running); // its outcomes leave with this worker, not run twice
        return 'migrate';
      }
      if (running && !pipelined) {
        if (!(await settled(running))) return 'stopped';
        await report(running);
        running = undefined;
        continue; // the checks again before the next chunk
      }
      between?.();
      // Before each chunk, not after: idle workers get their share before a long first task.
      checked(() => ctx.potentialSplit());
      const from = sentUpTo.get(range)!;
      const indexes: number[] = [];
      let upTo = from;
      while (upTo < range.hi && indexes.length < chunk) {
        if (!isCancelled(range.id, upTo)) indexes.push(upTo);
        upTo++;
      }
      sentUpTo.set(range, upTo);
      // The outcomes of a chunk come back in one message from the sandbox process.
      const outs = indexes.length === 0 ? Promise.resolve(new Map<number, string>()) : pool.run(poolKey(range.id), batch.graph, batch.codes, indexes, undefined, batch.limits, batch.packages, { together: true, lane }, batch.blobs);
      const next: Sent = { indexes, upTo, at: Date.now(), outs };
      next.outs.catch(() => undefined); // awaited after the running chunk: no unhandled rejection meanwhile
      if (running) await report(running);
      running = next;
    }
    if (running) await report(running);
    return 'done';
  } finally {
    sentUpTo.delete(range);
  }
}

/** The first batch the feeder has not taken yet, in the order they were started. */
function nextNotice(state: FeederState): { id: string; tasks: number } | undefined {
  worker.notices.sort((a, b) => (a.id < b.id ? -1 : 1));
  const next = worker.notices.find((n) => n.id > state.seq && !worker.dropped.has(n.id));
  if (next) worker.notices = worker.notices.filter((n) => n.id > next.id);
  return next;
}

/**
 * The feeder: takes the batches its node's kind tells it of, in order, and runs them. It never ends by
 * itself while the job runs, but it does not keep its worker slot for good either: a task the runtime
 * queued behind it on that slot (it does so for short tasks) would wait for it. So once it has run a
 * batch and again after waiting idle (100 ms, doubling to 5 s), it spawns its successor and returns; the
 * successor starts on a free slot and tells its node's kind where it is.
 */
async function runFeeder(state: FeederState, ctx: Ctx): Promise<void> {
  ctx.send({ type: 'feeder', seq: state.seq } satisfies TaskToKind);
  // A batch heard of while the feeder runs another starts as a task of its own: idle workers take it at once.
  const spawnNew = () => {
    for (let n = nextNotice(state); n; n = nextNotice(state)) {
      state.seq = n.id;
      ctx.spawn({ t: 'range', id: n.id, lo: 0, hi: n.tasks } satisfies ServiceTaskState);
    }
  };
  const handOver = (wait: number) => ctx.spawn({ t: 'feeder', seq: state.seq, wait } satisfies ServiceTaskState);
  const idleSince = Date.now();
  const wait = state.wait ?? FEEDER_WAIT_MS;
  for (;;) {
    if (state.run) {
      const how = await runRange(state.run, ctx, spawnNew);
      if (how === 'migrate' || ctx.cancelled()) return; // `run` keeps what is owed
      state.run = undefined;
      spawnNew();
      return handOver(FEEDER_WAIT_MS);
    }
    absorb(ctx.receive());
    if (ctx.cancelled() || checked(() => ctx.shouldMigrate())) return;
    const next = nextNotice(state);
    if (next) {
      state.seq = next.id;
      state.run = { id: next.id, lo: 0, hi: next.tasks };
      continue;
    }
    const idle = Date.now() - idleSince;
    if (idle >= wait) return handOver(Math.min(FEEDER_MAX_WAIT_MS, wait * 2));
    // Right after a batch another often follows: look every millisecond then, less often once idle a while.
    await pause(idle < FEEDER_WAIT_MS && wait === FEEDER_WAIT_MS ? WAIT_MS : IDLE_WAIT_MS);
  }
}

/**
 * Half of what is not sent yet; while a chunk runs (the range is busy with it), even a last index, so
 * that a task waiting behind a long one starts on an idle worker.
 */
function splitRange(range: Range): Range | undefined {
  const from = Math.max(range.lo, sentUpTo.get(range) ?? range.lo);
  const busy = from > range.lo;
  if (range.hi - from < (busy ? 1 : 2)) return undefined;
  const mid = from + ((range.hi - from) >> 1);
  const upper = { id: range.id, lo: mid, hi: range.hi };
  range.hi = mid;
  return upper;
}

export default defineTask<ServiceTaskState, never>({
  name: 'tidepool-service',
  async run(state, ctx) {
    enter(ctx.jobId);
    if (state.t === 'feeder') await runFeeder(state, ctx);
    else await runRange(state, ctx);
  },
  split(state) {
    const range = state.t === 'feeder' ? state.run : state;
    const upper = range ? splitRange(range) : undefined;
    return upper ? { t: 'range', ...upper } : undefined;
  },
});
