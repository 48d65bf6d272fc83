/**
 * The worker side of the File Availability Protocol (AME §3.2, §3.5; Fig. 2 and 4) without I/O: the
 * tasks given to this worker, the state of every file they read (INVALID, REMOTE, LOCAL, SHARED), a
 * reverse map from file to the tasks waiting for it, and the READY queue, run first-READY
 * first-run. A task is INVALID until the location of each input is known, then READY; FINISHED
 * when it ran. Stealing gives away READY tasks, preferring those whose inputs the thief holds.
 */
import type { FileLocation } from './location-shard.js';
import type { Workflow } from './workflow.js';

export type WorkerFileState = 'INVALID' | 'REMOTE' | 'LOCAL' | 'SHARED';

interface FileInfo {
  state: WorkerFileState;
  location?: FileLocation;
  /** A query for it is out (INVALID files only). */
  queried?: boolean;
}

export interface StolenTask {
  task: number;
  /** Known locations of its inputs (REMOTE or LOCAL at the victim, SHARED files need none). */
  inputs: [number, FileLocation | null][];
  /** It ran before: it runs again only to recreate its lost outputs (counts as no completion). */
  recreate?: boolean;
  /** Attempts made so far, and the members they failed on (a retry moved to another member). */
  attempts?: number;
  failedOn?: string[];
}

export class WorkerTasks {
  private readonly files = new Map<number, FileInfo>();
  private readonly missing = new Map<number, number>();
  private readonly waitingFor = new Map<number, number[]>();
  private ready: number[] = [];
  private readyHead = 0;
  /** The tasks in `ready` from readyHead on (not given away): membership and count without a scan. */
  private readonly queued = new Set<number>();
  readonly running = new Set<number>();

  constructor(
    private readonly workflow: Workflow,
    private readonly self: string,
    /** Files already in the shared directory: workflow inputs, and any saved by an earlier run. */
    private readonly isShared: (file: number) => boolean,
  ) {}

  fileState(file: number): WorkerFileState {
    return this.info(file).state;
  }

  location(file: number): FileLocation | undefined {
    return this.info(file).location;
  }

  private info(file: number): FileInfo {
    let f = this.files.get(file);
    if (!f) {
      f = { state: this.isShared(file) ? 'SHARED' : 'INVALID' };
      this.files.set(file, f);
    }
    return f;
  }

  /** Takes a task; returns the files to ask the location service about. */
  assign(task: number): number[] {
    if (this.missing.has(task) || this.running.has(task) || this.inReady(task)) return [];
    const queries: number[] = [];
    let missing = 0;
    for (const file of this.workflow.tasks[task]!.inputs) {
      const f = this.info(file);
      if (f.state !== 'INVALID') continue;
      missing++;
      let list = this.waitingFor.get(file);
      if (!list) this.waitingFor.set(file, (list = []));
      list.push(task);
      if (!f.queried) {
        f.queried = true;
        queries.push(file);
      }
    }
    if (missing === 0) this.enqueue(task);
    else this.missing.set(task, missing);
    return queries;
  }

  /** The location service says where `file` is: tasks whose last missing input it was become READY. */
  located(file: number, location: FileLocation): void {
    const f = this.info(file);
    if (f.state !== 'INVALID') return;
    f.state = location.node === this.self ? 'LOCAL' : 'REMOTE';
    f.location = location;
    delete f.queried;
    for (const task of this.waitingFor.get(file) ?? []) {
      const left = this.missing.get(task);
      if (left === undefined) continue;
      if (left === 1) {
        this.missing.delete(task);
        this.enqueue(task);
      } else this.missing.set(task, left - 1);
    }
    this.waitingFor.delete(file);
  }

  /** This node now holds `file` (it produced it, or fetched a remote copy). */
  holds(file: number, location: FileLocation): void {
    const f = this.info(file);
    if (f.state === 'INVALID') this.located(file, location);
    if (f.state !== 'SHARED') {
      f.state = 'LOCAL';
      f.location = location;
    }
  }

  /** A located input could not be had from its holder: INVALID again. Returns it if it must be asked for. */
  forget(file: number): number[] {
    if (this.info(file).state !== 'REMOTE') return [];
    // Other tasks may be READY on the strength of this location: they wait again too (started without
    // a location, a task would fail on an input it cannot name).
    return this.invalidate([file]);
  }

  /** The READY task `take` would return next, left in the queue. */
  peek(): number | undefined {
    while (this.readyHead < this.ready.length && this.ready[this.readyHead]! < 0) this.readyHead++;
    return this.ready[this.readyHead];
  }

  /** Takes a READY task out of the queue without running it here (it goes to another member). Returns what is known of its inputs. */
  remove(task: number): StolenTask | undefined {
    if (!this.queued.has(task)) return undefined;
    const i = this.ready.indexOf(task, this.readyHead);
    this.ready[i] = -1;
    this.queued.delete(task);
    return this.describe(task);
  }

  /** A task and what this worker knows of its inputs' locations, to hand it to another member. */
  describe(task: number): StolenTask {
    return { task, inputs: this.workflow.tasks[task]!.inputs.map((file) => [file, this.info(file).location ?? null]) };
  }

  /** The next READY task, in the order they became READY. */
  take(): number | undefined {
    while (this.readyHead < this.ready.length) {
      const task = this.ready[this.readyHead++]!;
      if (task < 0) continue; // given away
      if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
        this.ready = this.ready.slice(this.readyHead);
        this.readyHead = 0;
      }
      this.queued.delete(task);
      this.running.add(task);
      return task;
    }
    return undefined;
  }

  finished(task: number): void {
    this.running.delete(task);
  }

  /** A running task could not get an input (its holder left): the task waits for it again. */
  requeue(task: number): number[] {
    this.running.delete(task);
    return this.assign(task);
  }

  /**
   * `node` left: files only it held become INVALID; READY tasks that read them wait again.
   * Returns the files to query again.
   */
  nodeLeft(node: string): number[] {
    const lost: number[] = [];
    for (const [file, f] of this.files) {
      if (f.state === 'REMOTE' && f.location!.node === node) lost.push(file);
    }
    if (lost.length === 0) return [];
    return this.invalidate(lost);
  }

  /** Files whose location is no longer good: INVALID; READY tasks reading them, and waiting ones, wait for them again. Returns the files to query. */
  private invalidate(lost: number[]): number[] {
    for (const file of lost) {
      const f = this.info(file);
      f.state = 'INVALID';
      delete f.location;
    }
    const lostSet = new Set(lost);
    const stillReady: number[] = [];
    const waitAgain: number[] = [];
    const queries = new Set<number>();
    for (let i = this.readyHead; i < this.ready.length; i++) {
      const task = this.ready[i]!;
      if (task < 0) continue;
      if (this.workflow.tasks[task]!.inputs.some((file) => lostSet.has(file))) waitAgain.push(task);
      else stillReady.push(task);
    }
    this.ready = stillReady;
    this.readyHead = 0;
    this.queued.clear();
    for (const task of stillReady) this.queued.add(task);
    // Tasks already waiting on other files now wait for the lost ones too.
    const alreadyWaiting = [...this.missing.keys()];
    for (const task of waitAgain) for (const q of this.assign(task)) queries.add(q);
    for (const task of alreadyWaiting) {
      for (const file of this.workflow.tasks[task]!.inputs) {
        if (!lostSet.has(file) || (this.waitingFor.get(file) ?? []).includes(task)) continue;
        this.missing.set(task, this.missing.get(task)! + 1);
        this.waitingFor.set(file, [...(this.waitingFor.get(file) ?? []), task]);
      }
    }
    for (const file of lost) {
      this.info(file).queried = true;
      queries.add(file);
    }
    return [...queries];
  }

  private inReady(task: number): boolean {
    return this.queued.has(task);
  }

  private enqueue(task: number): void {
    this.ready.push(task);
    this.queued.add(task);
  }

  /** Files this worker waits for (to ask again after the location service's shards moved). */
  awaited(): number[] {
    return [...this.waitingFor.keys()];
  }

  /** Up to `limit` tasks waiting here, each with the inputs whose location it still waits for. */
  waits(limit: number): [number, number[]][] {
    const out: [number, number[]][] = [];
    for (const task of this.missing.keys()) {
      if (out.length >= limit) break;
      out.push([task, this.workflow.tasks[task]!.inputs.filter((f) => this.info(f).state === 'INVALID')]);
    }
    return out;
  }

  /**
   * Files held here, and files this member wrote to the shared directory and completion markers of its
   * tasks (located at `*`): what it announces again after the location service's shards moved (a
   * shard that died took its entries with it).
   */
  held(): [number, FileLocation][] {
    const out: [number, FileLocation][] = [];
    for (const [file, f] of this.files) if (f.state === 'LOCAL' && (f.location!.node === this.self || f.location!.node === '*')) out.push([file, f.location!]);
    return out;
  }

  /** Every task given to this worker and not finished (queued, waiting or running). */
  holding(): number[] {
    const out = [...this.missing.keys(), ...this.running];
    for (let i = this.readyHead; i < this.ready.length; i++) if (this.ready[i]! >= 0) out.push(this.ready[i]!);
    return out;
  }

  get readyCount(): number {
    return this.queued.size;
  }

  get waitingCount(): number {
    return this.missing.size;
  }

  /**
   * Gives up to `max` READY tasks to `thief`, those with the most input bytes already at the thief
   * first (then the most recently READY: the oldest stay, to run here next). Keeps at least `keep`.
   */
  steal(thief: string, max: number, keep = 1, fits: (task: number) => boolean = () => true): StolenTask[] {
    const candidates: { index: number; task: number; score: number }[] = [];
    const scanFrom = Math.max(this.readyHead + keep, this.ready.length - 4096);
    for (let i = this.ready.length - 1; i >= scanFrom; i--) {
      const task = this.ready[i]!;
      if (task < 0 || !fits(task)) continue;
      let score = 0;
      for (const file of this.workflow.tasks[task]!.inputs) {
        const f = this.info(file);
        if (f.location?.node === thief) score += this.workflow.files[file]!.size + 1;
      }
      candidates.push({ index: i, task, score });
    }
    candidates.sort((a, b) => b.score - a.score || b.index - a.index);
    return candidates.slice(0, max).map(({ index, task }) => {
      this.ready[index] = -1;
      this.queued.delete(task);
      return this.describe(task);
    });
  }

  /** Takes READY tasks stolen from another worker, with what that worker knew of their inputs. */
  adopt(stolen: StolenTask[]): number[] {
    const queries: number[] = [];
    for (const { task, inputs } of stolen) {
      for (const [file, location] of inputs) if (location) this.located(file, location);
      queries.push(...this.assign(task));
    }
    return queries;
  }
}
