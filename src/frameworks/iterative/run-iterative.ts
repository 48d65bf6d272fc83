/**
 * Running an iterative job: the options a caller gives (iterations, parameters, strategy), the job
 * input every task shares, submission with the iterative kind, and the sequential reference that
 * folds the very same blocks in the very same order on one thread.
 */
import type { Cluster, JobHandle } from '../../runtime/cluster.js';
import type { TaskRef } from '../../runtime/task.js';
import { DEFAULT_RUPER } from './balance/ruper-task.js';
import { IterationRandom, seedValue, type Seed } from './iteration-random.js';
import { STRATEGIES, type BalanceStrategy, type BlockRange, type IterativeDefinition, type IterativeInput, type IterativeResult, type RuperSettings } from './iterative-types.js';

/** The iterative kind: built in, so that every node of the job runs its own copy (see load-kind.ts). */
export const ITERATIVE_KIND = { module: 'builtin:iterative', export: 'default' };

/** Blocks a job is cut into by default: fine enough to balance, few enough to fold cheaply. */
const DEFAULT_BLOCKS = 512;

export interface IterativeOptions<P> {
  iterations: number;
  params?: P;
  /** Default 'steal' (it won bench/iterative here: see docs/iterative.md). */
  balance?: BalanceStrategy;
  /**
   * Seed of the iteration-indexed random streams, 0 … 2^64 − 1 (default 1): a number up to 2^53 − 1, or
   * a bigint or decimal string for any 64-bit seed.
   */
  seed?: Seed;
  /** Iterations per block (default: iterations / 512, rounded up). */
  blockSize?: number;
  /** Iterations per call of `iterate` (default min(blockSize, 1024)). */
  chunkSize?: number;
  ruper?: RuperSettings;
  /** How often running tasks make their progress durable (ms, default 1000). */
  checkpointMs?: number;
}

/** Checks the options and fills in the defaults; a bad option is named in the error. */
export function iterativeInput<P>(opts: IterativeOptions<P>): IterativeInput<P> {
  const whole = (x: unknown, name: string, min: number) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min) throw new RangeError(`iterative: ${name} must be a whole number ≥ ${min}, got ${String(x)}`);
    return x;
  };
  const iterations = whole(opts.iterations, 'iterations', 1);
  const blockSize = whole(opts.blockSize ?? Math.ceil(iterations / DEFAULT_BLOCKS), 'blockSize', 1);
  const chunkSize = whole(opts.chunkSize ?? Math.min(blockSize, 1024), 'chunkSize', 1);
  const balance = opts.balance ?? 'steal';
  if (!STRATEGIES.includes(balance)) throw new RangeError(`iterative: balance must be one of ${STRATEGIES.join(', ')}, got "${String(balance)}"`);
  const ruper = { ...DEFAULT_RUPER, ...opts.ruper };
  for (const [k, v] of Object.entries(ruper)) if (!(typeof v === 'number' && v > 0)) throw new RangeError(`iterative: ruper.${k} must be a positive number, got ${String(v)}`);
  return {
    params: opts.params as P, iterations, blockSize, chunkSize, seed: seedOf(opts.seed ?? 1), balance, ruper,
    checkpointMs: opts.checkpointMs ?? 1000,
  };
}

function seedOf(seed: Seed): string {
  try {
    return seedValue(seed).toString();
  } catch (err) {
    throw new RangeError(`iterative: ${(err as Error).message}`);
  }
}

/** The first task: every block; static and RUPER spread it over nodes then threads first. */
export function rootRange(input: IterativeInput<unknown>): BlockRange {
  const blocks = Math.ceil(input.iterations / input.blockSize);
  return { lo: 0, hi: blocks, ...(input.balance === 'steal' ? {} : { fan: 'nodes' as const }) };
}

/**
 * Submits an iterative job (the application's module and export name) to a cluster; its result is an
 * `IterativeResult`. `nodes`: how many nodes the job asks for (default: every idle node).
 */
export function submitIterative<P>(cluster: Cluster, app: TaskRef, opts: IterativeOptions<P> & { nodes?: number }): Promise<JobHandle> {
  const input = iterativeInput(opts);
  return cluster.submit(app, rootRange(input), { input, kind: ITERATIVE_KIND, ...(opts.nodes !== undefined ? { nodes: opts.nodes } : {}) });
}

/** Runs an iterative job to its end on a cluster and returns its result. */
export async function runIterative<T, P>(cluster: Cluster, app: TaskRef, opts: IterativeOptions<P> & { nodes?: number }): Promise<IterativeResult<T>> {
  const job = await submitIterative(cluster, app, opts);
  const r = await job.result<{ n: number; v: T }>();
  return { iterations: r.n, blocks: Math.ceil(opts.iterations / iterativeInput(opts).blockSize), value: r.v };
}

/** The same blocks, chunks and fold order on this thread: the reference a parallel run must equal bit for bit. */
export function iterateSequentially<T, P>(app: IterativeDefinition<T, P> | { iterative: IterativeDefinition<T, P> }, opts: IterativeOptions<P>): IterativeResult<T> {
  const def = 'iterative' in app ? app.iterative : app;
  const input = iterativeInput(opts);
  const rng = new IterationRandom(input.seed);
  const ctx = { params: input.params, random: (i: number) => rng.at(i) };
  let value = def.result.initial();
  let iterations = 0;
  const blocks = Math.ceil(input.iterations / input.blockSize);
  for (let k = 0; k < blocks; k++) {
    const first = k * input.blockSize;
    const end = Math.min(first + input.blockSize, input.iterations);
    let tally = def.result.initial();
    for (let i = first; i < end; i += input.chunkSize) {
      const out = def.iterate(i, Math.min(input.chunkSize, end - i), tally, ctx);
      if (out !== undefined) tally = out;
    }
    value = def.result.combine(value, tally);
    iterations += end - first;
  }
  return { iterations, blocks, value };
}
