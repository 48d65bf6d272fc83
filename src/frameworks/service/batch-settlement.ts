/**
 * The client's side of one running batch: applies each task's outcome as it arrives (seed 002 §3.3:
 * "on arrival"), atomically (apply-changes.ts), settles the task, prints what it printed, and knows
 * when the batch is over. Tasks are applied in the order their outcomes arrive, which is the order
 * they finish (roughly: outcomes travel in groups); a cancelled task is settled at once and an outcome
 * arriving for it later is dropped, with its effects.
 */
import { BatchApplier, WriteConflictError } from './apply-changes.js';
import type { Capture } from './capture.js';
import { CancelledError, type TaskBatch } from './distributed-task.js';
import type { BatchCosts, BatchRun } from './executor.js';
import type { TaskOutcome } from './graph-format.js';
import { mapStack } from './stack-map.js';
import type { ConsoleLevel, ConsoleRecord } from './sandbox-console.js';
import { CONSOLE_BYTES_PER_TASK } from './sandbox-console.js';

/** One line a task printed, as the client hears it. */
export interface ConsoleLine {
  /** The task's label (`task 3`, `iteration 7`). */
  task: string;
  level: ConsoleLevel;
  text: string;
}

/** How each task of the batch is settled (a DistributedTask, or a parallel loop's error list). */
export interface TaskSlot {
  settle(as: 'done' | 'failed' | 'cancelled', value: unknown): boolean;
  console?(lines: [ConsoleLevel, string][]): void;
}

export interface SettlementOptions {
  /** When `start` was called (performance.now()), for the time to the first outcome. */
  t0: number;
  serializationMs: number;
  requestBytes: number;
  onConsole: (line: ConsoleLine) => void;
}

export class BatchSettlement implements TaskBatch {
  /** Resolves with the batch's costs once every task is settled. */
  readonly done: Promise<BatchCosts>;
  private readonly settled: Uint8Array;
  private remaining: number;
  private readonly applier: BatchApplier;
  private diffMs = 0;
  private taskMs = 0;
  private firstOutcomeMs = 0;

  constructor(private readonly capture: Capture, private readonly slots: TaskSlot[], private readonly run: BatchRun, private readonly opts: SettlementOptions) {
    this.settled = new Uint8Array(slots.length);
    this.remaining = slots.length;
    this.applier = new BatchApplier(capture);
    this.done = this.consume();
    this.done.catch(() => undefined);
  }

  private label(i: number): string {
    return this.capture.graph.tasks[i]?.label ?? `task ${i}`;
  }

  /** Settles task `i` once; false if it was settled already. */
  private settle(i: number, as: 'done' | 'failed' | 'cancelled', value: unknown): boolean {
    if (this.settled[i] || i < 0 || i >= this.slots.length) return false;
    this.settled[i] = 1;
    this.remaining--;
    this.slots[i]!.settle(as, value);
    return true;
  }

  /** Cancels tasks not settled yet: they reject with a CancelledError now; resolves with how many were. */
  async cancel(indexes: readonly number[]): Promise<number> {
    const now = indexes.filter((i) => this.settle(i, 'cancelled', new CancelledError(this.label(i))));
    if (now.length > 0) await this.run.cancel(now);
    return now.length;
  }

  private async consume(): Promise<BatchCosts> {
    let applyMs = 0;
    try {
      // To the end of the run (not only until every task settled): the executor may still be finishing (a
      // cancelled task running on, a worker told to drop the batch), and `done` means it is over.
      for await (const group of this.run.arrivals) {
        const g0 = performance.now();
        for (const [i, o] of group) this.arrive(i, o);
        applyMs += performance.now() - g0;
      }
    } catch (e) {
      for (let i = 0; i < this.slots.length; i++) this.settle(i, 'failed', e);
    }
    for (let i = 0; i < this.slots.length; i++) this.settle(i, 'failed', new Error(`${this.label(i)}: the batch ended without its outcome`));
    const costs: BatchCosts = {
      serializationMs: this.opts.serializationMs, transferMs: 0, dispatchMs: 0, executionMs: 0, roundTrips: 0, responseBytes: 0,
      requestBytes: this.opts.requestBytes, ...this.run.costs(),
      diffingMs: this.diffMs + applyMs, taskMs: this.taskMs, firstOutcomeMs: this.firstOutcomeMs,
    };
    this.run.report?.({ serializationMs: costs.serializationMs, transferMs: costs.transferMs });
    return costs;
  }

  private arrive(i: number, o: TaskOutcome): void {
    if (i < 0 || i >= this.slots.length || this.settled[i]) return; // a duplicate, or a task cancelled meanwhile
    if (this.firstOutcomeMs === 0) this.firstOutcomeMs = performance.now() - this.opts.t0;
    this.diffMs += o.dms ?? 0;
    this.taskMs += o.ms ?? 0;
    const label = this.label(i);
    if (o.log) this.print(i, label, o.log);
    if (!o.ok) {
      this.settle(i, 'failed', remoteError(label, o, this.capture));
      return;
    }
    let value: unknown;
    try {
      value = this.applier.apply(i, o);
    } catch (e) {
      this.settle(i, 'failed', e instanceof WriteConflictError ? e : new AggregateError([e], `${label}: ${(e as Error).message}`));
      return;
    }
    this.settle(i, 'done', value);
  }

  private print(i: number, task: string, log: ConsoleRecord): void {
    this.slots[i]!.console?.(log.lines);
    for (const [level, text] of log.lines) this.opts.onConsole({ task, level, text });
    if (log.dropped > 0) this.opts.onConsole({ task, level: 'warn', text: `… ${log.dropped} more console line(s) dropped (a task keeps at most ${CONSOLE_BYTES_PER_TASK / 1024} KiB of console output)` });
  }
}

/** A remote exception as an AggregateError whose inner error's stack points at the client's source lines. */
function remoteError(label: string, o: TaskOutcome, capture: Capture): AggregateError {
  const err = o.err ?? { name: 'Error', message: 'unknown failure' };
  const inner = new Error(err.message);
  inner.name = err.name;
  inner.stack = err.stack ? mapStack(err.stack, capture) : `${err.name}: ${err.message}`;
  return new AggregateError([inner], `${label} failed: ${err.name}: ${err.message}`);
}

/** The default printer: `[task 3] text`, to stdout (log, info, debug) or stderr (warn, error). */
export function printConsoleLine(line: ConsoleLine): void {
  const text = `[${line.task}] ${line.text.split('\n').join(`\n[${line.task}] `)}\n`;
  if (line.level === 'log') process.stdout.write(text);
  else process.stderr.write(text);
}
