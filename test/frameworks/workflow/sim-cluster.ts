/**
 * A deterministic simulation of a workflow run for the engine's tests: members exchange messages
 * through FIFO channels with a seeded latency, tasks take their recorded runtime × scale of
 * simulated time, files live in per-node stores (lost when the node is killed), the journal is a
 * list in "shared storage". It records when every task started and whether each input existed then.
 */
import type { LayerBody } from '../../../src/runtime/kinds/job-kind.js';
import { Rng } from '../../../src/util/rng.js';
import type { JournalState } from '../../../src/frameworks/workflow/dispatcher.js';
import type { FileLocation } from '../../../src/frameworks/workflow/location-shard.js';
import type { AddedTask, Workflow } from '../../../src/frameworks/workflow/workflow.js';
import { applyAddition, checkAddition } from '../../../src/frameworks/workflow/workflow-growth.js';
import { WorkflowEngine, type EngineOptions } from '../../../src/frameworks/workflow/workflow-engine.js';

interface Event { at: number; seq: number; node: string; fn: () => void }

export interface SimOptions extends EngineOptions {
  nodes: number;
  seed?: number;
  /** Seconds of simulated time per recorded second. */
  scale?: number;
  latency?: number;
  /** Attempts (1-based) of these tasks that fail. */
  failures?: Map<number, number>;
  /** Give the engines the simulated clock (in milliseconds), so that they sample latencies. */
  clock?: boolean;
  /** Tasks a task adds when it finishes (applied to the workflow every member shares, then each engine told). */
  additions?: (task: number) => AddedTask[] | undefined;
}

export class SimCluster {
  now = 0;
  private seq = 0;
  private events: Event[] = [];
  readonly engines = new Map<string, WorkflowEngine>();
  readonly alive = new Set<string>();
  readonly stores = new Map<string, Set<number>>();
  readonly journalLines: [number, string][] = [];
  readonly shared = new Set<number>();
  readonly starts: { task: number; node: string; at: number }[] = [];
  readonly finishes = new Map<number, number>();
  readonly violations: string[] = [];
  readonly completions = new Map<number, number>();
  outcome: { ok: true } | { ok: false; error: string } | undefined;
  private readonly rng: Rng;
  private readonly lastDelivery = new Map<string, number>();
  private readonly attemptsSeen = new Map<number, number>();
  private readonly added = new Set<number>();
  messages = 0;

  constructor(readonly workflow: Workflow, private readonly opts: SimOptions) {
    this.rng = new Rng(opts.seed ?? 1);
    for (let i = 0; i < opts.nodes; i++) this.addNode(`n${i}`);
  }

  addNode(id: string): WorkflowEngine {
    const engine = new WorkflowEngine(this.workflow, id, {
      send: (to, body) => this.deliver(id, to, body),
      run: (task, inputs) => this.run(id, task, inputs),
      readJournal: () => this.readJournal(),
      journal: (done) => this.journalLines.push(...done),
      finish: (o) => (this.outcome ??= o),
      random: () => this.rng.next(),
      ...(this.opts.clock ? { now: () => this.now * 1000 } : {}),
    }, this.opts);
    this.engines.set(id, engine);
    this.alive.add(id);
    this.stores.set(id, new Set());
    return engine;
  }

  get leader(): string {
    return [...this.alive].sort()[0]!;
  }

  start(): void {
    this.at(0, this.leader, () => this.engines.get(this.leader)!.lead([...this.alive]));
    this.scheduleTick();
  }

  private scheduleTick(): void {
    this.at(0.05, '', () => {
      for (const id of this.alive) this.engines.get(id)!.tick();
      if (!this.outcome) this.scheduleTick();
    });
  }

  private readJournal(): JournalState {
    return { done: new Map(this.journalLines), saved: this.shared };
  }

  at(delay: number, node: string, fn: () => void): void {
    this.events.push({ at: this.now + delay, seq: this.seq++, node, fn });
  }

  private deliver(from: string, to: string, body: LayerBody): void {
    this.messages++;
    const key = `${from}>${to}`;
    const at = Math.max(this.now + (this.opts.latency ?? 0.001) * (0.5 + this.rng.next()), this.lastDelivery.get(key) ?? 0);
    this.lastDelivery.set(key, at);
    this.events.push({ at, seq: this.seq++, node: to, fn: () => {
      if (this.alive.has(from)) this.engines.get(to)!.onMessage(from, body);
    } });
  }

  private run(node: string, task: number, inputs: [number, FileLocation | 'shared'][]): void {
    this.starts.push({ task, node, at: this.now });
    for (const [file, loc] of inputs) {
      if (this.workflow.files[file]!.marker) {
        if (loc === 'shared' || loc.node !== '*') this.violations.push(`marker ${this.workflow.files[file]!.key} located at ${JSON.stringify(loc)}`);
        continue;
      }
      const exists = loc === 'shared' ? this.workflow.files[file]!.producer < 0 || this.shared.has(file) : this.alive.has(loc.node) && this.stores.get(loc.node)!.has(file);
      if (!exists) {
        if (loc !== 'shared' && !this.alive.has(loc.node)) return this.at(0, node, () => this.engines.get(node)!.inputLost(task, file));
        this.violations.push(`task ${this.workflow.tasks[task]!.id} started at ${this.now} before input ${this.workflow.files[file]!.key} existed`);
      }
    }
    const spec = this.workflow.tasks[task]!;
    const attempt = (this.attemptsSeen.get(task) ?? 0) + 1;
    this.attemptsSeen.set(task, attempt);
    const failUpTo = this.opts.failures?.get(task) ?? 0;
    this.at(Math.max(0, spec.runtime) * (this.opts.scale ?? 1), node, () => {
      const engine = this.engines.get(node)!;
      if (attempt <= failUpTo) return engine.taskFailed(task, `injected failure ${attempt}`);
      const added = this.added.has(task) ? undefined : this.opts.additions?.(task);
      if (added) {
        // Applied once (a task run again adds nothing), and known to every member before the task's completion is reported.
        this.added.add(task);
        const from = this.workflow.tasks.length;
        applyAddition(this.workflow, task, checkAddition(this.workflow, task, added));
        for (const id of this.alive) this.engines.get(id)!.grew(from);
      }
      for (const f of spec.outputs) {
        if (this.workflow.files[f]!.consumers.length === 0) this.shared.add(f);
        else this.stores.get(node)!.add(f);
      }
      if (!this.finishes.has(task)) this.finishes.set(task, this.now);
      this.completions.set(task, (this.completions.get(task) ?? 0) + 1);
      engine.taskFinished(task, spec.outputs.filter((f) => this.workflow.files[f]!.consumers.length > 0 && !this.workflow.files[f]!.marker).map((f) => [f, { node }]));
    });
  }

  kill(node: string): void {
    this.alive.delete(node);
    this.stores.get(node)!.clear();
    for (const id of this.alive) this.engines.get(id)!.peerGone(node);
    const leader = this.leader;
    this.engines.get(leader)!.lead([...this.alive]);
  }

  join(node: string): void {
    this.addNode(node);
    this.engines.get(this.leader)!.lead([...this.alive]);
  }

  /** Runs until the outcome (or `until`); returns the simulated makespan. */
  runUntil(until = Infinity, stopAt?: (sim: this) => boolean): number {
    while (!this.outcome && this.events.length > 0) {
      let best = 0;
      for (let i = 1; i < this.events.length; i++) {
        const e = this.events[i]!;
        const b = this.events[best]!;
        if (e.at < b.at || (e.at === b.at && e.seq < b.seq)) best = i;
      }
      const e = this.events[best]!;
      this.events[best] = this.events[this.events.length - 1]!;
      this.events.pop();
      if (e.at > until) break;
      this.now = e.at;
      if (e.node !== '' && !this.alive.has(e.node)) continue;
      e.fn();
      if (stopAt?.(this)) break;
    }
    return this.now;
  }

  /** Every task started only after all its parents finished (a finish recorded before the start). */
  checkOrder(): string[] {
    const problems = [...this.violations];
    const firstFinish = new Map<number, number>();
    for (const [t, at] of this.finishes) firstFinish.set(t, at);
    for (const { task, at } of this.starts) {
      for (const p of this.workflow.tasks[task]!.parents) {
        const f = firstFinish.get(p);
        if (f === undefined || f > at) problems.push(`task ${this.workflow.tasks[task]!.id} started at ${at} before parent ${this.workflow.tasks[p]!.id} finished`);
      }
    }
    return problems;
  }
}
