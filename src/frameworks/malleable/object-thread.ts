/**
 * One object thread of a member, without I/O: it hosts the objects the mapping places on it
 * (ObjectHost), steps them iteration after iteration once every message of the iteration is in, sends
 * what they sent to the other threads of its node directly (one batch to each per iteration) and what
 * they sent to other nodes to its member, and answers its member's commands (thread-protocol.ts).
 *
 * What an iteration waits for: one batch from every other thread of the node, and one from every other
 * node of the mapping (which the member forwards, split by thread) — or, for the first iteration of a
 * run, as many as the leader counted; nothing when the iteration is **settled** (its messages were
 * counted in already, or came packed with objects that moved here or from a checkpoint).
 *
 * The worker-thread wiring is thread-entry.ts; inline-threads.ts runs the same code on the main
 * thread (a simulation, a node without worker threads).
 */
import { performance } from 'node:perf_hooks';
import type { Transferable } from 'node:worker_threads';
import { encode } from '../../util/codec.js';
import type { AnyMalleableApp } from './malleable-app.js';
import { emptyOutbox, ObjectHost, type Outbox, type Routed } from './object-host.js';
import type { Mapping } from './protocol.js';
import type { FromThread, PackedPart, PeerBatch, ThreadCommand, ToThread } from './thread-protocol.js';

/** How a thread talks to its member and to the other threads of its node. */
export interface ThreadIO {
  toMain(msg: FromThread, transfer?: readonly Transferable[]): void;
  toPeer(thread: number, msg: PeerBatch): void;
  /** Lets the thread's event loop run (between the objects of a long iteration). */
  pause(): Promise<void>;
}

/** Which thread this is: thread `slot` of `threads` on node `node`. */
export interface ThreadPlace {
  node: string;
  slot: number;
  threads: number;
}

/** Steps taken in a row before the thread lets its event loop run (ms). */
const PAUSE_EVERY_MS = 20;

/** A run in progress: iterations [first, end), `next` the one to step. */
interface Span {
  id: number;
  first: number;
  end: number;
  next: number;
  /** Batches from other nodes the first iteration waits for. */
  expect: number;
  /** When the thread started waiting for the next iteration's messages. */
  since: number;
}

type Traffic = PeerBatch | Extract<ToThread, { type: 'remote' | 'end' }>;

export class ObjectThread {
  private readonly host: ObjectHost;
  private epoch = 0;
  private map: Mapping | undefined;
  /** iteration → batches in from other threads of this node, and from other nodes. */
  private readonly local = new Map<number, number>();
  private readonly remote = new Map<number, number>();
  /** Traffic of a newer epoch than this thread's (its restore is on the way). */
  private future: Traffic[] = [];
  /** The iteration whose messages are all where they are read (no counting). */
  private settledAt = -1;
  /** The last iteration stepped here in this epoch (the thread then has every collective contribution of it). */
  private ranThrough = -1;
  /** The job ends before this iteration (the convergence test). */
  private endedAt: number | undefined;
  private span: Span | undefined;
  private settling: { id: number; iteration: number; expect: number } | undefined;
  private driving = false;
  private driveAgain = false;
  private closed = false;

  constructor(private readonly app: AnyMalleableApp, private readonly params: unknown, private readonly place: ThreadPlace, private readonly io: ThreadIO) {
    this.host = new ObjectHost(app, params);
  }

  /** A message from the member. */
  onMain(msg: ToThread): void {
    if (this.closed) return;
    if (msg.type === 'remote' || msg.type === 'end') return this.accept(msg);
    this.command(msg);
  }

  /** A batch from another thread of this node. */
  onPeer(msg: PeerBatch): void {
    if (!this.closed) this.accept(msg);
  }

  /** The member let this thread go: everything is dropped. */
  close(): void {
    this.closed = true;
    this.host.clear();
    this.future = [];
    this.span = undefined;
    this.settling = undefined;
  }

  private accept(msg: Traffic): void {
    if (msg.epoch > this.epoch) return void this.future.push(msg);
    if (msg.epoch < this.epoch) return;
    if (msg.type === 'end') {
      this.endedAt = Math.min(this.endedAt ?? Infinity, msg.iteration);
    } else {
      this.host.deliver(msg.iteration, msg.items);
      if (msg.collective) this.host.deliverCollective(msg.iteration, msg.collective);
      const counts = msg.type === 'batch' ? this.local : this.remote;
      counts.set(msg.iteration, (counts.get(msg.iteration) ?? 0) + 1);
    }
    this.checkSettled();
    this.drive();
  }

  /** A newer epoch: forget the old counts, and take in the traffic of this one that came early. */
  private adopt(epoch: number): void {
    if (epoch === this.epoch) return;
    this.epoch = epoch;
    this.local.clear();
    this.remote.clear();
    this.settledAt = -1;
    this.ranThrough = -1;
    this.endedAt = undefined;
    const early = this.future;
    this.future = [];
    for (const msg of early) if (msg.epoch >= epoch) this.accept(msg);
  }

  private reply(id: number, value: unknown, transfer?: readonly Transferable[]): void {
    this.io.toMain({ type: 'reply', id, ok: true, value }, transfer);
  }

  private fail(id: number, err: unknown): void {
    this.io.toMain({ type: 'reply', id, ok: false, error: `thread ${this.place.slot} of ${this.place.node}: ${err instanceof Error ? err.message : String(err)}` });
  }

  /** Ends the run and the wait under way with an error (a rollback replaces them). */
  private abandon(why: string): void {
    if (this.span) this.fail(this.span.id, why);
    if (this.settling) this.fail(this.settling.id, why);
    this.span = undefined;
    this.settling = undefined;
  }

  private command(msg: ThreadCommand & { id: number; epoch: number }): void {
    if (msg.epoch < this.epoch) return this.fail(msg.id, `stale command of epoch ${msg.epoch} (the thread is at epoch ${this.epoch})`);
    try {
      if (msg.type === 'restore') {
        this.abandon('superseded by a newer configuration');
        this.host.clear();
        this.epoch = -1;
      }
      if (msg.epoch !== this.epoch) this.abandon('superseded by a newer configuration');
      this.adopt(msg.epoch);
      switch (msg.type) {
        case 'restore': return this.restore(msg);
        case 'map':
          this.install(msg.map);
          if (msg.settledAt !== undefined) this.settledAt = msg.settledAt;
          return this.reply(msg.id, this.host.size);
        case 'run':
          if (this.span || this.settling) throw new Error('asked to run while it runs or settles');
          if (!this.map) throw new Error('asked to run before it has a mapping');
          this.span = { id: msg.id, first: msg.iteration, end: msg.iteration + msg.count, next: msg.iteration, expect: msg.expect, since: performance.now() };
          return this.drive();
        case 'settle':
          this.settling = { id: msg.id, iteration: msg.iteration, expect: msg.expect };
          return this.checkSettled();
        case 'take': return this.reply(msg.id, this.host.take(msg.indices, msg.iteration));
        case 'put':
          this.host.put(msg.objects);
          return this.reply(msg.id, this.host.size);
        case 'pack': {
          const indices = this.host.indices();
          // A copy of exactly these bytes (the encoder's buffer is its own, and larger), moved to the member.
          const bytes = new Uint8Array(encode({ objects: indices.map((i) => this.host.peek(i, msg.iteration)) }));
          return this.reply(msg.id, { indices, bytes } satisfies PackedPart, [bytes.buffer]);
        }
        case 'collect': return this.reply(msg.id, this.host.summaries());
      }
    } catch (err) {
      this.fail(msg.id, err);
    }
  }

  private install(map: Mapping): void {
    const at = map.nodes.indexOf(this.place.node);
    if (at >= 0 && map.threads[at] !== this.place.threads) throw new Error(`the mapping gives ${this.place.node} ${map.threads[at]} object threads, it runs ${this.place.threads}`);
    this.map = map;
  }

  private restore(msg: Extract<ThreadCommand, { type: 'restore' }> & { id: number }): void {
    this.install(msg.map);
    if (msg.objects) {
      this.host.put(msg.objects);
      if (msg.settledAt !== undefined) this.settledAt = msg.settledAt;
    } else {
      // The objects' first messages are read in iteration 0.
      this.route(0, { ...emptyOutbox(), messages: this.host.init(msg.init ?? []) }, []);
    }
    this.reply(msg.id, this.host.size);
  }

  /** Every message of `iteration` is in: `expect` batches from other nodes, one from each other thread. */
  private ready(iteration: number, expect: number): boolean {
    if (this.settledAt === iteration) return true;
    return (this.local.get(iteration) ?? 0) >= this.place.threads - 1 && (this.remote.get(iteration) ?? 0) >= expect;
  }

  private checkSettled(): void {
    const s = this.settling;
    if (!s || !this.ready(s.iteration, s.expect)) return;
    this.settling = undefined;
    this.settledAt = s.iteration;
    this.reply(s.id, this.host.size);
  }

  /**
   * Whether the application's convergence test ends the job before `iteration`: decided only where every
   * contribution of the iteration before is known (it ran here, or objects brought the combined values).
   */
  private endsBefore(iteration: number): boolean {
    if (iteration === 0 || !this.app.done || (this.ranThrough !== iteration - 1 && !this.host.collectiveAdopted(iteration))) return false;
    if (!this.app.done(this.host.collectiveView(iteration).reduced, iteration - 1, this.params)) return false;
    this.endedAt = iteration;
    this.io.toMain({ type: 'ended', epoch: this.epoch, iteration });
    return true;
  }

  /** Steps the run on as far as the messages in allow (one drive at a time; a later call drives again). */
  private drive(): void {
    if (this.driving) {
      this.driveAgain = true;
      return;
    }
    this.driving = true;
    void this.stepReady().finally(() => {
      this.driving = false;
      if (this.driveAgain) {
        this.driveAgain = false;
        this.drive();
      }
    });
  }

  private async stepReady(): Promise<void> {
    try {
      for (let span = this.span; span && span === this.span; span = this.span) {
        const it = span.next;
        if (it >= span.end || (this.endedAt !== undefined && this.endedAt <= it)) {
          this.span = undefined;
          this.reply(span.id, it - span.first);
          continue;
        }
        if (!this.ready(it, it === span.first ? span.expect : (this.map?.nodes.length ?? 1) - 1)) return;
        if (this.endsBefore(it)) continue;
        if (!(await this.step(it, span))) return;
        span.next++;
        span.since = performance.now();
      }
    } catch (err) {
      // An application error (a step, the convergence test) or a message to no object: the leader rolls back.
      const span = this.span;
      if (span) {
        this.span = undefined;
        this.fail(span.id, err);
      }
    }
  }

  /** Steps every object here through `iteration` and sends what they sent; false if a newer command superseded the run meanwhile. */
  private async step(iteration: number, span: Span): Promise<boolean> {
    const epoch = this.epoch;
    const out = emptyOutbox();
    const loads: number[] = [];
    let sincePause = 0;
    for (const index of this.host.indices()) {
      const took = this.host.step(index, iteration, out);
      loads.push(index, took);
      if ((sincePause += took) > PAUSE_EVERY_MS) {
        sincePause = 0;
        await this.io.pause();
        if (this.epoch !== epoch || this.span !== span || this.closed) return false;
      }
    }
    this.local.delete(iteration);
    this.remote.delete(iteration);
    this.host.endIteration(iteration);
    this.ranThrough = iteration;
    this.route(iteration + 1, out, loads, performance.now() - span.since, out.resize && { ...out.resize, iteration });
    return true;
  }

  /**
   * Delivers what the objects sent to objects of this thread, sends one batch to every other thread of
   * the node (with the collective traffic, the same to each), and what goes to other nodes to the member.
   */
  private route(iteration: number, out: Outbox, loads: number[], ms?: number, resize?: Extract<FromThread, { type: 'out' }>['resize']): void {
    const map = this.map!;
    const { node, slot, threads } = this.place;
    const toThread = Array.from({ length: threads }, (): Routed[] => []);
    const toNodes: Routed[] = [];
    for (const m of out.messages) {
      const owner = map.owner[m.to];
      if (owner === undefined) throw new Error(`object ${m.from} sent to object ${m.to}, which does not exist`);
      if (map.nodes[owner] !== node) toNodes.push(m);
      else toThread[map.thread[m.to]!]!.push(m);
    }
    this.host.deliver(iteration, toThread[slot]!);
    this.host.deliverCollective(iteration, out.collective);
    const { contributions, broadcasts } = out.collective;
    const collective = contributions.length + broadcasts.length > 0 ? { collective: out.collective } : {};
    for (let k = 0; k < threads; k++) {
      if (k !== slot) this.io.toPeer(k, { type: 'batch', epoch: this.epoch, iteration, items: toThread[k]!, ...collective });
    }
    this.io.toMain({ type: 'out', epoch: this.epoch, iteration, items: toNodes, collective: out.collective, loads, ...(ms !== undefined ? { ms } : {}), ...(resize ? { resize } : {}) });
  }
}
