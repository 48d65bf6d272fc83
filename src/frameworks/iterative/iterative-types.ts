/** The iterative framework's public shapes: what an application defines and what a job returns. */
import type { IterationRandom } from './iteration-random.js';

/** How iterations are balanced across threads and node processes. */
export type BalanceStrategy = 'static' | 'steal' | 'ruper';
export const STRATEGIES: readonly BalanceStrategy[] = ['ruper', 'steal', 'static'];

/** What `iterate` sees besides its iterations: the job's parameters and iteration-indexed random streams. */
export interface IterationContext<P> {
  readonly params: P;
  /** The random stream of iteration `i` (the same numbers wherever and however often i runs). */
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

/** The job's result: the combined tally and how many iterations went into it (exactly the number asked for). */
export interface IterativeResult<T> {
  iterations: number;
  blocks: number;
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

/** What every task of an iterative job shares (its TaskContext.input). */
export interface IterativeInput<P> {
  params: P;
  iterations: number;
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

/** What a block contributes: its iteration count and its tally. */
export interface BlockTally<T> {
  n: number;
  v: T;
}
