import { MessageChannel, Worker, type MessagePort, type Transferable } from 'node:worker_threads';
import { log } from '../../util/log.js';
import { BUDGET, CANCEL, ControlFlags, MIGRATE, PROGRESS, SPLIT_WANT, WANT_SPLIT } from './control-flags.js';
import { JOB_SETUPS_KEPT, type DoneColumns, type EncodedSpans, type FromWorker, type JobSetup, type RunRequest, type ToWorker, type WorkerPost } from './messages.js';
import { SharedInput } from './shared-input.js';

/** The worker entry next to this file: .ts when running from sources (tsx), .js when built. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY = new URL(`./worker-main${FROM_SOURCES ? '.ts' : '.js'}`, import.meta.url);
/**
 * From sources (tests, examples run with tsx), a worker must register the TypeScript loader itself
 * before loading its entry: Node 20 does not apply the parent's --import hooks to workers.
 */
const BOOTSTRAP = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(ENTRY.href)}); })`;

/** A shared input crosses as its SharedArrayBuffer view (shared, not copied); anything else is cloned. */
function setupInput(input: unknown): NonNullable<JobSetup['input']> {
  return input instanceof SharedInput ? { shared: input.bytes, form: input.form } : { value: input };
}

function createWorker(workerData: unknown): Worker {
  return FROM_SOURCES ? new Worker(BOOTSTRAP, { eval: true, workerData }) : new Worker(ENTRY, { workerData });
}

interface Slot {
  worker: Worker;
  flags: ControlFlags;
  /** Tasks sent to this worker and not yet reported back, in order: the first one runs. */
  tasks: string[];
  /** The job of each of `tasks`, at the same index. */
  taskJobs: string[];
  /** How many of `tasks` each dispatch still has (a dispatch is one task, or a batch sent in one message). */
  dispatches: number[];
  /**
   * Jobs whose setup (task type, input, variable board) this worker already holds, with the board it
   * was given: a node that leaves a job and joins it again has a new board, which the worker must get.
   */
  jobs: Map<string, SharedArrayBuffer | undefined>;
  /** Spawn reports recorded in this turn of the event loop, acknowledged to the worker at its end (see spawnsRecorded). */
  recordedSpawns: number;
}

/**
 * A thread's report with the slot it came from and the job of the task it names (`job`; absent where the
 * pool did not send the task, e.g. a simulation): a report that outlives its job (a late `cancelled` of a
 * task of a job that ended) must not reach the next job, whose tasks may have the same ids (every pool
 * job's first task is `root`).
 */
export type WorkerEvent = { slot: number; job?: string } & FromWorker;

/** What a job runner needs of its node's workers (the thread pool, or a simulation in tests). */
export interface Workers {
  readonly size: number;
  idleSlots(): number[];
  /**
   * Runs a task on an idle slot, or behind the one a pipelining slot runs; `input` is the job's
   * input, shipped only to workers that do not hold it yet.
   */
  run(slot: number, req: RunRequest, input?: unknown): void;
  /**
   * Like `run` for several tasks of one job at once, started one after the other: one dispatch (one
   * message to the thread), which counts as one task where `run` and `pipelineSlots` are concerned (optional).
   */
  runBatch?(slot: number, reqs: RunRequest[], input?: unknown): void;
  /** Slots running one task (or one batch) that can take a second one to start right after it (optional). */
  pipelineSlots?(): number[];
  /** The task a slot runs now (its first), if any (optional; with pipelining). */
  currentTask?(slot: number): string | undefined;
  /** Makes sure a pipelined task that has not started never runs: it is reported cancelled (optional). */
  drop?(slot: number, taskId: string): void;
  /** Asks the slot's task to split off work at its next split point (`want`: the amount wanted, in the task's units). */
  requestSplit(slot: number, want?: number): void;
  clearSplit(slot: number): void;
  splitRequested(slot: number): boolean;
  requestMigrate(slot: number): void;
  cancel(slot: number): void;
  /** Cumulative progress units the slot's tasks reported (TaskContext.progress) (optional). */
  progress?(slot: number): number;
  /**
   * The slot's progress units and when they last moved (ms on this thread's `performance.now()`; 0 if
   * they never did), or undefined when a task was writing them just then: look again later (optional).
   */
  progressSample?(slot: number): ProgressSample | undefined;
  /**
   * A spawn report of the slot (`child`, `children`, `encoded-children` of a task run with a spawnWindow) was
   * recorded or dropped: its worker may send another (optional; see RunRequest.spawnWindow).
   */
  spawnsRecorded?(slot: number): void;
  /** Grants the slot's running task a budget (TaskContext.budget); undefined withdraws it (optional). */
  setBudget?(slot: number, amount: number | undefined): void;
  /** Sends an application message to the slot's running task (TaskContext.receive) (optional). */
  post?(slot: number, body: unknown): void;
  /**
   * Starts a **resident** on the slot's thread: a job kind's long-lived code that runs on the thread's
   * event loop beside the task runner (which it then shares), until its port closes. The thread imports
   * `entry.module` and calls its export `entry.export(port, data)`; `transfer` moves the ports or buffers
   * `data` holds. Returns the node's end of the resident's own channel: it emits 'close' when the
   * resident closes it or the thread exits, and gets `{ type: 'attach-failed', error }` (AttachFailed)
   * when the resident could not start (optional).
   */
  attach?(slot: number, entry: ResidentEntry, data: unknown, transfer?: readonly Transferable[]): MessagePort;
}

/** A resident's code: a module (its URL or specifier, as the thread imports it) and the function it exports. */
export interface ResidentEntry {
  module: string;
  export: string;
}

/** A slot's progress count and when it last moved (ms, `performance.now()`). */
export interface ProgressSample {
  units: number;
  atMs: number;
}

/** hrtime and performance.now() tick on the same monotonic clock; this is the distance between their origins. */
const HRTIME_TO_NOW_MS = performance.now() - Number(process.hrtime.bigint()) / 1e6;

/**
 * A node's worker threads. Each slot runs one task at a time; control words in shared memory
 * let the node ask a running task to split, migrate or stop without a message. A slot holds at most
 * two dispatches, the one running and the next; a dispatch is one task or a batch of short ones.
 */
export class WorkerPool implements Workers {
  private readonly slots: Slot[] = [];
  /**
   * Residents waiting, per slot, for its thread to show it is alive (a `pong`, or `ready` from a
   * replacement): a thread that has just died still looks alive until its 'exit' event, and a resident
   * sent to it would be lost with the ports it carries.
   */
  private readonly attaching = new Map<number, Array<{ msg: ToWorker; transfer: readonly Transferable[] }>>();
  private readonly controlBuffer: SharedArrayBuffer;
  private closed = false;

  /**
   * `holdsProcess: false`: the threads do not keep the process alive (an embedded cluster holds it
   * while it has jobs, process-hold.ts); by default they do, as long as the pool is open.
   */
  constructor(readonly size: number, private readonly onEvent: (event: WorkerEvent) => void, private readonly opts: { holdsProcess?: boolean } = {}) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`workers must be a positive whole number, got ${size}`);
    this.controlBuffer = ControlFlags.allocate(size);
  }

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, (_, i) => this.spawn(i)));
  }

  /** Slots not running a task. */
  idleSlots(): number[] {
    return this.slotsWith((n) => n === 0);
  }

  runningSlots(): number[] {
    return this.slotsWith((n) => n > 0);
  }

  pipelineSlots(): number[] {
    return this.slotsWith((n) => n === 1);
  }

  /** Slots whose count of dispatches passes `test` (asked several times per task: a plain loop, no per-slot arrays). */
  private slotsWith(test: (dispatches: number) => boolean): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.slots.length; i++) if (test(this.slots[i]!.dispatches.length)) out.push(i);
    return out;
  }

  currentTask(slot: number): string | undefined {
    return this.slots[slot]?.tasks[0];
  }

  drop(slot: number, taskId: string): void {
    const s = this.slots[slot];
    if (s?.tasks.includes(taskId)) s.worker.postMessage({ type: 'drop', taskId } satisfies ToWorker);
  }

  run(slot: number, req: RunRequest, input?: unknown): void {
    this.runBatch(slot, [req], input);
  }

  runBatch(slot: number, reqs: RunRequest[], input?: unknown): void {
    const s = this.slots[slot];
    if (!s || s.dispatches.length > 1) throw new Error(`worker ${slot} cannot take another task`);
    if (reqs.length === 0) return;
    const jobId = reqs[0]!.jobId;
    if (reqs.some((r) => r.jobId !== jobId)) throw new Error('a batch holds tasks of one job');
    const pipelined = s.dispatches.length === 1;
    // A fresh start clears the control word; a pipelined task leaves it to its predecessor (the worker sorts it out).
    if (!pipelined) {
      s.flags.reset();
      // The slot was idle: what its last task reported and the node has not recorded yet counts no more (at most a
      // window more for a while; acknowledgements still due stop at zero). A report the node will never acknowledge
      // (its job ended meanwhile: no runner takes it) would otherwise hold the slot's next task back.
      s.flags.clearSpawns();
    }
    this.setUp(s, reqs[0]!, input);
    // Only what differs per task crosses per task: cloning the shared parts cost a third of the dispatch.
    const ids: string[] = [];
    const states: unknown[] = [];
    let partials: unknown[] | undefined;
    let encoded: EncodedSpans | undefined;
    for (let i = 0; i < reqs.length; i++) {
      const req = reqs[i]!;
      s.tasks.push(req.taskId);
      s.taskJobs.push(req.jobId);
      ids.push(req.taskId);
      // An encoded state crosses as a span of its batch's buffer (each buffer copied once per message).
      const record = req.encoded;
      if (record) {
        states.push(undefined);
        encoded ??= { buffers: [], spans: new Array<number>(3 * reqs.length).fill(-1) };
        let b = encoded.buffers.lastIndexOf(record.buffer);
        if (b < 0) b = encoded.buffers.push(record.buffer) - 1;
        encoded.spans[3 * i] = b;
        encoded.spans[3 * i + 1] = record.byteOffset;
        encoded.spans[3 * i + 2] = record.byteLength;
      } else {
        states.push(req.state);
      }
      if (req.partial !== undefined) (partials ??= new Array<unknown>(reqs.length).fill(undefined))[i] = req.partial;
    }
    s.dispatches.push(reqs.length);
    s.worker.postMessage({ type: 'runs', runs: { jobId, ids, states, ...(partials ? { partials } : {}), ...(encoded ? { encoded } : {}), pipelined } } satisfies ToWorker);
  }

  /** Sends the job's setup first if this worker does not hold it. */
  private setUp(s: Slot, req: RunRequest, input: unknown): void {
    if (s.jobs.has(req.jobId) && s.jobs.get(req.jobId) === req.board) return;
    s.jobs.delete(req.jobId); // (re)inserted last: the oldest setup is the first evicted
    s.jobs.set(req.jobId, req.board);
    if (s.jobs.size > JOB_SETUPS_KEPT) s.jobs.delete(s.jobs.keys().next().value!);
    const setup: ToWorker = {
      type: 'job',
      job: {
        jobId: req.jobId, ref: req.ref, board: req.board, varNames: req.varNames,
        ...(input !== undefined ? { input: setupInput(input) } : {}), ...(req.owner !== undefined ? { owner: req.owner } : {}),
        ...(req.spawnWindow !== undefined ? { spawnWindow: req.spawnWindow } : {}),
      },
    };
    s.worker.postMessage(setup);
  }

  /** Asks the task on `slot` to split off one task at its next potential split point. */
  requestSplit(slot: number, want?: number): void {
    const s = this.slots[slot];
    if (!s || s.tasks.length === 0) return;
    // The amount goes first: the task reads it only after it has taken the request.
    s.flags.setWide(SPLIT_WANT, want ?? -1);
    if (s.flags.get(WANT_SPLIT) <= 0) s.flags.set(WANT_SPLIT, 1);
  }

  progress(slot: number): number {
    return this.slots[slot]?.flags.getWide(PROGRESS) ?? 0;
  }

  progressSample(slot: number): ProgressSample | undefined {
    const flags = this.slots[slot]?.flags;
    if (!flags) return { units: 0, atMs: 0 };
    const s = flags.progressSample();
    return s && { units: s.units, atMs: s.atNs === 0n ? 0 : Number(s.atNs) / 1e6 + HRTIME_TO_NOW_MS };
  }

  /**
   * Acknowledged at the end of this turn (setImmediate), not at once: what the worker sends meanwhile waits for
   * the next turn, so one turn takes in at most a window of spawn reports per slot, however fast they are recorded.
   */
  spawnsRecorded(slot: number): void {
    const s = this.slots[slot];
    if (!s) return;
    if (s.recordedSpawns++ > 0) return;
    setImmediate(() => {
      const count = s.recordedSpawns;
      s.recordedSpawns = 0;
      s.flags.spawnsRecorded(count);
    });
  }

  setBudget(slot: number, amount: number | undefined): void {
    this.slots[slot]?.flags.setWide(BUDGET, amount === undefined ? -1 : Math.max(0, amount));
  }

  post(slot: number, body: unknown): void {
    this.slots[slot]?.worker.postMessage({ type: 'app', body } satisfies ToWorker);
  }

  /** Withdraws an unserved split request (the work went elsewhere). */
  clearSplit(slot: number): void {
    this.slots[slot]?.flags.set(WANT_SPLIT, 0);
  }

  splitRequested(slot: number): boolean {
    return (this.slots[slot]?.flags.get(WANT_SPLIT) ?? 0) > 0;
  }

  requestMigrate(slot: number): void {
    this.slots[slot]?.flags.set(MIGRATE, 1);
  }

  cancel(slot: number): void {
    this.slots[slot]?.flags.set(CANCEL, 1);
  }

  attach(slot: number, entry: ResidentEntry, data: unknown, transfer: readonly Transferable[] = []): MessagePort {
    const s = this.slots[slot];
    if (!s) throw new Error(`no worker ${slot} (the pool has ${this.size})`);
    if (this.closed) throw new Error('the worker pool is closed');
    const { port1, port2 } = new MessageChannel();
    const queue = this.attaching.get(slot) ?? [];
    this.attaching.set(slot, [...queue, { msg: { type: 'attach', module: entry.module, export: entry.export, port: port2, data }, transfer: [port2, ...transfer] }]);
    if (queue.length === 0) s.worker.postMessage({ type: 'ping' } satisfies ToWorker);
    return port1;
  }

  /** The slot's thread is alive: the residents waiting for it go to it. */
  private sendAttaches(slot: number): void {
    const queue = this.attaching.get(slot);
    this.attaching.delete(slot);
    for (const { msg, transfer } of queue ?? []) this.slots[slot]!.worker.postMessage(msg, transfer);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.attaching.values()) for (const { msg } of queue) if (msg.type === 'attach') msg.port.close();
    this.attaching.clear();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(index: number): Promise<void> {
    const worker = createWorker({ controlBuffer: this.controlBuffer, slot: index });
    const slot: Slot = { worker, flags: ControlFlags.forWorker(this.controlBuffer, index), tasks: [], taskJobs: [], dispatches: [], jobs: new Map(), recordedSpawns: 0 };
    // A replaced thread's unrecorded reports died with it (acknowledgements still due for them stop at zero).
    slot.flags.clearSpawns();
    this.slots[index] = slot;
    const report = (msg: FromWorker) => {
      // Tasks report in the order they were sent: the first of the slot's tasks with this id is the one.
      const at = 'taskId' in msg ? slot.tasks.indexOf(msg.taskId) : -1;
      // The message is ours (a fresh copy from the thread): it becomes the event.
      const ev = msg as WorkerEvent;
      ev.slot = index;
      if (at >= 0) ev.job = slot.taskJobs[at]!;
      if (msg.type === 'done' || msg.type === 'migrated' || msg.type === 'failed' || msg.type === 'cancelled') finished(slot, at);
      this.onEvent(ev);
    };
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (msg: WorkerPost) => {
        if (msg.type === 'ready' || msg.type === 'pong') {
          if (msg.type === 'ready') {
            ready = true;
            resolve();
          }
          return this.sendAttaches(index);
        }
        if (msg.type === 'batch') for (const m of msg.events) report(m);
        else if (msg.type === 'dones') reportDones(msg, report);
        else report(msg);
      });
      worker.on('error', (err) => {
        if (!ready) return reject(err);
        log.error('worker', `worker ${index} crashed`, err);
      });
      worker.on('exit', (code) => {
        if (this.closed) return;
        slot.dispatches.length = 0;
        const jobs = slot.taskJobs.splice(0);
        for (const [i, taskId] of slot.tasks.splice(0).entries()) this.onEvent({ slot: index, job: jobs[i]!, type: 'failed', taskId, error: `worker thread exited with code ${code}` });
        // Replace the lost thread so the node keeps its capacity.
        this.spawn(index).catch((err: unknown) => log.error('worker', `could not restart worker ${index}`, err));
      });
      // After the listeners: a new 'message' listener refs the thread's port again.
      if (this.opts.holdsProcess === false) worker.unref();
    });
  }
}

/** Completions that crossed as columns, reported one by one as the events they stand for. */
function reportDones(d: DoneColumns, report: (m: FromWorker) => void): void {
  for (let i = 0; i < d.taskIds.length; i++) {
    const inline = d.inline?.[i];
    report(inline ? { type: 'done', taskId: d.taskIds[i]!, partial: d.partials[i], inline, ms: d.ms[i]! } : { type: 'done', taskId: d.taskIds[i]!, partial: d.partials[i], ms: d.ms[i]! });
  }
}

/** A task of the slot (at index `at` of its tasks) was reported back: it leaves the slot, and its dispatch with its last task. */
function finished(slot: Slot, at: number): void {
  if (at < 0) return;
  slot.tasks.splice(at, 1);
  slot.taskJobs.splice(at, 1);
  // Tasks are reported in the order they were sent: find the dispatch that position belongs to.
  let d = 0;
  for (let before = slot.dispatches[0]!; before <= at; before += slot.dispatches[d]!) d++;
  if (--slot.dispatches[d]! === 0) slot.dispatches.splice(d, 1);
}
