/** The iterative framework's public shapes: what an application defines and what a job returns. */
import type { IterationRandom } from './iteration-random.js';

/** How iterations are balanced across threads and node processes. */
export type BalanceStrategy = 'static' | 'steal' | 'ruper';
export const STRATEGIES: readonly BalanceStrategy[] = ['ruper', 'steal', 'static'];

/** What `iterate` sees besides its iterations: the parameters, which task it runs, iteration-indexed random streams. */
export interface IterationContext<P> {
  /** The job's parameters, or in a job of several tasks those of the task being run. */
  readonly params: P;
  /** The task being run: its position in the job's `tasks` and its name (a job of one task: 0 and the application's name). */
  readonly task: { readonly index: number; readonly name: string };
  /**
   * The random stream of iteration `i` (the same numbers wherever and however often i runs). In a job of
   * several tasks `i` counts from 0 in each task, and the stream is that of the job's iteration
   * (the task's first iteration in the job + i), so no two tasks share a stream.
   */
  random(i: number): IterationRandom;
}

export interface IterativeDefinition<T, P> {
  /** Stable name (logs, job listings). */
  name: string;
  /**
   * Runs iterations first … first+count−1 into `tally` (mutate it, or return a new one). Iterations
   * must not depend on each other; an iteration's randomness comes from `ctx.random(i)`.
   */
  iterate(first: number, count: number, tally: T, ctx: IterationContext<P>): T | void;
  /** An empty tally, and how two tallies combine (blocks are combined in iteration order). */
  result: { initial: () => T; combine: (acc: T, block: T) => T };
}

/**
 * One task of a job of several (RUPER-LB Fig. 1: a process runs several tasks, PenRed one per particle
 * source): its own iteration count and parameters, and its own tally in the result.
 */
export interface IterativeTask<P> {
  /** Default: "task N" (N from 1). */
  name?: string;
  iterations: number;
  /** Default: the job's `params`. */
  params?: P;
}

/** A task's share of the result. */
export interface IterativeTaskResult<T> {
  name: string;
  iterations: number;
  value: T;
}

/** The job's result: the combined tally and how many iterations went into it (exactly the number asked for). */
export interface IterativeResult<T> {
  iterations: number;
  blocks: number;
  /** A job of several tasks: each task's tally, in the job's order (`value` is all of them combined, in that order). */
  tasks?: Array<IterativeTaskResult<T>>;
  value: T;
}

/** Tunables of the RUPER balancer (seed 001 Table 1), in seconds. */
export interface RuperSettings {
  /** Δt_pc: time between checkpoints (also the cap on report intervals). */
  checkpointInterval?: number;
  /** t_min: below this predicted remaining time the assignment stays as it is. */
  minRemaining?: number;
  /** ds_max: the speed deviation that leaves the report interval alone. */
  maxDeviation?: number;
}

/** A task of the job as its input carries it: where its iterations lie in the job's. */
export interface TaskSegment<P> {
  name: string;
  /** The job's iteration where this task's start (tasks follow each other in the job's order). */
  first: number;
  iterations: number;
  params: P;
}

/** What every task of an iterative job shares (its TaskContext.input). */
export interface IterativeInput<P> {
  params: P;
  /** All iterations of the job (of every task). */
  iterations: number;
  /** A job of several tasks: consecutive segments of the job's iterations. */
  tasks?: Array<TaskSegment<P>>;
  /** Iterations per block: the unit of accounting (blocks are emitted and combined by index). */
  blockSize: number;
  /** Iterations per call of `iterate` inside a block (fixed per job, so tallies never depend on balancing). */
  chunkSize: number;
  /** The random streams' 64-bit seed, in decimal (JSON has no 64-bit integers). */
  seed: string;
  balance: BalanceStrategy;
  ruper: Required<RuperSettings>;
  /** How often a running task makes its progress durable (ms). */
  checkpointMs: number;
}

/** A task's state: blocks lo … hi−1 still to run; `fan` spreads the first task over nodes, then threads. */
export interface BlockRange {
  lo: number;
  hi: number;
  fan?: 'nodes' | 'threads';
}

/**
 * What a block contributes: its iteration count and its tally; in a job of several tasks also the part
 * of each task it holds (a block may end one task and start the next), by task index, in order.
 */
export interface BlockTally<T> {
  n: number;
  v: T;
  tasks?: Array<{ task: number; n: number; v: T }>;
}
