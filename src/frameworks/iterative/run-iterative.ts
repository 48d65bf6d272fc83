/**
 * Running an iterative job: the options a caller gives (iterations, parameters, strategy), the job
 * input every task shares, submission with the iterative kind, and the sequential reference that
 * folds the very same blocks in the very same order on one thread.
 */
import type { Cluster, JobHandle } from '../../runtime/client/cluster.js';
import type { TaskRef } from '../../runtime/worker/task.js';
import { DEFAULT_RUPER } from './balance/ruper-task.js';
import { BlockRunner, combineBlocks } from './block-runner.js';
import { seedValue, type Seed } from './iteration-random.js';
import { ITERATIVE_KIND } from './iterative-kind-ref.js';
import {
  STRATEGIES, type BalanceStrategy, type BlockRange, type BlockTally, type IterativeDefinition, type IterativeInput, type IterativeResult, type IterativeTask, type RuperSettings, type TaskSegment,
} from './iterative-types.js';

/** Blocks a job is cut into by default: fine enough to balance, few enough to fold cheaply. */
const DEFAULT_BLOCKS = 512;

export interface IterativeOptions<P> {
  /** Iterations to run (with `tasks`: their sum, or left out). */
  iterations?: number;
  params?: P;
  /**
   * Several tasks in one job (RUPER-LB Fig. 1; PenRed's particle sources), each with its own iteration
   * count, parameters and tally: consecutive segments of the job's iterations, balanced together.
   */
  tasks?: Array<IterativeTask<P>>;
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
  const tasks = opts.tasks === undefined ? undefined : taskSegments(opts, whole);
  const iterations = tasks ? tasks.reduce((sum, t) => sum + t.iterations, 0) : whole(opts.iterations, 'iterations', 1);
  if (tasks && opts.iterations !== undefined && opts.iterations !== iterations) {
    throw new RangeError(`iterative: iterations (${String(opts.iterations)}) is not the sum of the tasks' iterations (${iterations}); leave it out`);
  }
  const blockSize = whole(opts.blockSize ?? Math.ceil(iterations / DEFAULT_BLOCKS), 'blockSize', 1);
  const chunkSize = whole(opts.chunkSize ?? Math.min(blockSize, 1024), 'chunkSize', 1);
  const balance = opts.balance ?? 'steal';
  if (!STRATEGIES.includes(balance)) throw new RangeError(`iterative: balance must be one of ${STRATEGIES.join(', ')}, got "${String(balance)}"`);
  const ruper = { ...DEFAULT_RUPER, ...opts.ruper };
  for (const [k, v] of Object.entries(ruper)) if (!(typeof v === 'number' && v > 0)) throw new RangeError(`iterative: ruper.${k} must be a positive number, got ${String(v)}`);
  return {
    params: opts.params as P, iterations, ...(tasks ? { tasks } : {}), blockSize, chunkSize, seed: seedOf(opts.seed ?? 1), balance, ruper,
    checkpointMs: opts.checkpointMs ?? 1000,
  };
}

/** The tasks as consecutive segments of the job's iterations; a bad task is named by its position. */
function taskSegments<P>(opts: IterativeOptions<P>, whole: (x: unknown, name: string, min: number) => number): Array<TaskSegment<P>> {
  if (!Array.isArray(opts.tasks) || opts.tasks.length === 0) throw new RangeError('iterative: tasks must be a non-empty array of { name?, iterations, params? }');
  let first = 0;
  return opts.tasks.map((t, k) => {
    const at = `tasks[${k}]`;
    if (typeof t !== 'object' || t === null) throw new RangeError(`iterative: ${at} must be an object { name?, iterations, params? }`);
    if (t.name !== undefined && (typeof t.name !== 'string' || t.name === '')) throw new RangeError(`iterative: ${at}.name must be a non-empty string`);
    const iterations = whole(t.iterations, `${at}.iterations`, 1);
    const segment = { name: t.name ?? `task ${k + 1}`, first, iterations, params: (t.params ?? opts.params) as P };
    first += iterations;
    return segment;
  });
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
  return iterativeResult(iterativeInput(opts), await job.result<BlockTally<T>>());
}

/** A job's folded blocks as its result: the tally, and each task's in a job of several. */
export function iterativeResult<T>(input: IterativeInput<unknown>, folded: BlockTally<T>): IterativeResult<T> {
  const out: IterativeResult<T> = { iterations: folded.n, blocks: Math.ceil(input.iterations / input.blockSize), value: folded.v };
  if (!input.tasks) return out;
  return {
    ...out,
    tasks: input.tasks.map((t, k) => {
      const part = folded.tasks?.find((x) => x.task === k);
      if (!part) throw new Error(`iterative: the result holds no tally for task ${k} (${t.name})`);
      return { name: t.name, iterations: part.n, value: part.v };
    }),
  };
}

/** The same blocks, chunks and fold order on this thread: the reference a parallel run must equal bit for bit. */
export function iterateSequentially<T, P>(app: IterativeDefinition<T, P> | { iterative: IterativeDefinition<T, P> }, opts: IterativeOptions<P>): IterativeResult<T> {
  const def = 'iterative' in app ? app.iterative : app;
  const input = iterativeInput(opts);
  const blocks = new BlockRunner(def, input);
  let folded: BlockTally<T> = { n: 0, v: def.result.initial() };
  for (let k = 0; k < blocks.blocks; k++) folded = combineBlocks(def.result.combine, folded, blocks.run(k)!);
  return iterativeResult(input, folded);
}
