/**
 * A task of a Distribution: a closure taking no arguments, started with others as one batch. Its
 * result settles once its outcome has arrived and its side effects were applied (or it failed, or was
 * cancelled); what it printed is kept in `console`.
 */
import type { ConsoleLevel } from './sandbox-console.js';

/** A task was cancelled before its outcome was applied (none of its effects were). */
export class CancelledError extends Error {
  constructor(label: string) {
    super(`${label} was cancelled`);
    this.name = 'CancelledError';
  }
}

/** How a started task reaches its batch: cancelling settles the tasks (CancelledError) and stops them. */
export interface TaskBatch {
  cancel(indexes: readonly number[]): Promise<number>;
}

export class DistributedTask<R> {
  /** Resolves with the task's result once its outcome is applied (rejects with an AggregateError if the task failed). */
  readonly result: Promise<R>;
  /** What the task printed with `console`, as `[level, text]` lines (bounded: see docs/service.md). */
  readonly console: [ConsoleLevel, string][] = [];
  private settle!: { resolve(v: R): void; reject(e: unknown): void };
  private settledAs: 'done' | 'failed' | 'cancelled' | undefined;
  private readonly listeners: (() => void)[] = [];
  /** @internal Its batch and index there, once started. */
  batch: { run: TaskBatch; index: number } | undefined;

  constructor(readonly fn: () => R, readonly label?: string) {
    this.result = new Promise<R>((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => undefined); // awaited by the application, or not at all
  }

  get started(): boolean {
    return this.batch !== undefined;
  }

  /** `undefined` while it runs (or before it is started). */
  get state(): 'done' | 'failed' | 'cancelled' | undefined {
    return this.settledAs;
  }

  /** Cancels this task (`distribution.cancel([task])`); false if it had already finished or was not started. */
  async cancel(): Promise<boolean> {
    if (!this.batch || this.settledAs) return false;
    return (await this.batch.run.cancel([this.batch.index])) > 0;
  }

  /** @internal Settles the task once (later calls are ignored); returns whether this call settled it. */
  finish(as: 'done' | 'failed' | 'cancelled', value: unknown): boolean {
    if (this.settledAs) return false;
    this.settledAs = as;
    if (as === 'done') this.settle.resolve(value as R);
    else this.settle.reject(value);
    for (const l of this.listeners.splice(0)) l();
    return true;
  }

  /** @internal Runs `listener` when the task settles (at once if it has). */
  onSettled(listener: () => void): void {
    if (this.settledAs) listener();
    else this.listeners.push(listener);
  }
}
