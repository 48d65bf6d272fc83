/**
 * `defineIterative`: an application's iterations become a tidepool task type over ranges of
 * fixed, index-aligned blocks (block k = iterations [kB, (k+1)B)). Each block's tally starts from
 * `result.initial()`, is emitted under its block index and folded in index order by the runtime's
 * ordered result, so the job's result is bit-identical whatever ran where. A range moves between
 * threads and nodes only as a whole task (split, spawn, steal, migration), through the ledger, so
 * every block counts exactly once.
 */
import { CONTROL_CHECK_EVERY, defineTask, type TaskContext, type TaskType } from '../../runtime/worker/task.js';
import { BlockRunner, combineBlocks } from './block-runner.js';
import type { BlockRange, BlockTally, IterativeDefinition, IterativeInput } from './iterative-types.js';
import { toTask, type FromKind, type LayoutAnswer } from './worker-messages.js';

export type IterativeTaskType<T, P> = TaskType<BlockRange, BlockTally<T>, IterativeInput<P>> & { readonly iterative: IterativeDefinition<T, P> };

/**
 * Declares an iterative application. Export the result from its module, so every node can load it:
 *
 * ```ts
 * export default defineIterative<Tally, Params>({
 *   name: 'slab-transport',
 *   iterate(first, count, tally, ctx) { for (let i = first; i < first + count; i++) { const r = ctx.random(i); … } },
 *   result: { initial: () => ({ through: 0 }), combine: (a, b) => ({ through: a.through + b.through }) },
 * });
 * ```
 */
export function defineIterative<T, P = undefined>(def: IterativeDefinition<T, P>): IterativeTaskType<T, P> {
  if (!def || typeof def.iterate !== 'function') throw new TypeError('defineIterative: `iterate` must be a function');
  if (!def.result || typeof def.result.initial !== 'function' || typeof def.result.combine !== 'function') {
    throw new TypeError('defineIterative: `result` needs `initial` and `combine` functions');
  }
  const task = defineTask<BlockRange, BlockTally<T>, IterativeInput<P>>({
    name: def.name,
    run: (state, ctx) => runBlocks(def, state, ctx),
    // The runtime's own splitting serves the `steal` strategy only; the others move blocks by the balancer's orders.
    split(state, want) {
      if (state.fan !== undefined) return undefined;
      return stealSplit(state, want);
    },
    result: {
      ordered: true,
      initial: () => ({ n: 0, v: def.result.initial() }),
      combine: (a, b) => combineBlocks(def.result.combine, a, b),
    },
  });
  return { ...task, iterative: def };
}

/** Half of the blocks not yet started (or `want` of them), taken from the end. */
function stealSplit(state: BlockRange, want?: number): BlockRange | undefined {
  // Block lo may be under way (splits are offered between chunks too): only blocks after it can go.
  const free = state.hi - state.lo - 1;
  if (free < 1) return undefined;
  const take = want !== undefined && want > 0 ? Math.min(free, Math.ceil(want)) : Math.ceil(free / 2);
  const child = { lo: state.hi - take, hi: state.hi };
  state.hi = child.lo;
  return child;
}

/** Runs one block at a time, obeying the balancer between blocks (and between chunks for stops). */
function runBlocks<T, P>(def: IterativeDefinition<T, P>, state: BlockRange, ctx: TaskContext<BlockTally<T>, IterativeInput<P>>): void {
  const job = ctx.input;
  const steal = job.balance === 'steal';
  if (state.fan !== undefined) fanOut(state, ctx);
  const blocks = new BlockRunner(def, job);
  ctx.send({ type: 'it-range', lo: state.lo, hi: state.hi });
  const firstBlock = state.lo;
  let checkpointed = Date.now();
  // After each chunk: progress, then a stop drops the unfinished block (it is run again from its first
  // iteration wherever the range goes); a thief waits only briefly for a split, so one is offered
  // between chunks (it takes blocks after this one).
  const afterChunk = (n: number) => {
    ctx.progress(n);
    if (ctx.cancelled() || migrateNow(ctx)) return true;
    if (steal && splitNow(ctx)) ctx.send({ type: 'it-range', lo: state.lo, hi: state.hi });
    return false;
  };
  while (state.lo < state.hi) {
    if (!steal) {
      const kept = keepWithinBudget(state, firstBlock, ctx);
      if (obeyOrders(state, ctx) || kept) ctx.send({ type: 'it-range', lo: state.lo, hi: state.hi });
    }
    if (state.lo >= state.hi) return;
    const tally = blocks.run(state.lo, afterChunk);
    if (!tally) return;
    ctx.emit(tally, state.lo);
    state.lo++;
    if (Date.now() - checkpointed >= job.checkpointMs && state.lo < state.hi) {
      ctx.checkpoint();
      checkpointed = Date.now();
    }
    if (steal && splitNow(ctx)) ctx.send({ type: 'it-range', lo: state.lo, hi: state.hi });
  }
}

/**
 * The first task of a static or RUPER job spreads its blocks equally: over the job's nodes (a part
 * placed on each), then each part over its node's threads. This is RUPER's preliminary assignment.
 */
function fanOut<T, P>(state: BlockRange, ctx: TaskContext<BlockTally<T>, IterativeInput<P>>): void {
  const layout = askLayout(ctx);
  const fan = state.fan;
  delete state.fan;
  if (!layout) return;
  const targets: Array<string | undefined> = fan === 'nodes' ? [undefined, ...layout.peers] : Array.from({ length: layout.workers }, () => undefined);
  const parts = targets.length;
  const total = state.hi - state.lo;
  if (total < 2) return;
  // A job on one node: straight to its threads.
  if (parts < 2) return void (fan === 'nodes' && fanOut(Object.assign(state, { fan: 'threads' as const }), ctx));
  const lo = state.lo;
  const bound = (k: number) => lo + Math.floor((total * k) / parts);
  state.hi = bound(1);
  for (let k = parts - 1; k >= 1; k--) {
    if (bound(k + 1) <= bound(k)) continue;
    const child: BlockRange = { lo: bound(k), hi: bound(k + 1), ...(fan === 'nodes' ? { fan: 'threads' as const } : {}) };
    ctx.spawn(child, targets[k] !== undefined ? { on: targets[k]! } : undefined);
  }
  if (fan === 'nodes') fanOut(Object.assign(state, { fan: 'threads' as const }), ctx);
}

/** Asks the node for the job's members and its worker count; waits for the answer in shared memory (up to 10 s). */
function askLayout<T, P>(ctx: TaskContext<BlockTally<T>, IterativeInput<P>>): LayoutAnswer | undefined {
  ctx.send({ type: 'it-layout?' });
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !ctx.cancelled()) {
    for (const m of ctx.receive()) {
      const body = toTask(m);
      if (body?.type === 'it-layout') return body;
    }
    Atomics.wait(nap, 0, 0, 2);
  }
  return undefined;
}

/**
 * The thread level's assignment, read between blocks from the slot's budget word (shared memory, no
 * message): the block where this range's kept iterations end. What lies beyond goes to this node's
 * pool as a new task, for its faster threads. A budget below the range's first block was meant for
 * the slot's previous task (the node set it before it learnt that task ended): ignored. Cutting is
 * idempotent, so the word needs no acknowledgement. Returns true if the range changed.
 */
function keepWithinBudget<T, P>(state: BlockRange, firstBlock: number, ctx: TaskContext<BlockTally<T>, IterativeInput<P>>): boolean {
  const budget = ctx.budget();
  if (budget === undefined || budget < firstBlock) return false;
  return cut(state, Math.max(state.lo, budget), ctx);
}

/**
 * The process level's order, a message because it names the node the iterations go to: `it-shed`
 * (send this many iterations to node `to`), read between blocks. Returns true if the range changed.
 */
function obeyOrders<T, P>(state: BlockRange, ctx: TaskContext<BlockTally<T>, IterativeInput<P>>): boolean {
  let changed = false;
  for (const m of ctx.receive()) {
    const order: FromKind | undefined = toTask(m);
    if (order?.type !== 'it-shed') continue;
    changed = cut(state, Math.max(state.lo, state.hi - Math.round(order.iterations / ctx.input.blockSize)), ctx, order.to) || changed;
  }
  return changed;
}

/**
 * Blocks `at` … hi−1 become a new task (placed on node `to`, else pooled here). The parent's state
 * shrinks before the child is spawned, so the checkpoint that travels with the child already excludes
 * its blocks.
 */
function cut<T, P>(state: BlockRange, at: number, ctx: TaskContext<BlockTally<T>, IterativeInput<P>>, to?: string): boolean {
  if (at >= state.hi) return false;
  const child: BlockRange = { lo: at, hi: state.hi };
  state.hi = at;
  ctx.spawn(child, to !== undefined ? { on: to } : undefined);
  ctx.send({ type: 'it-shed', lo: child.lo, hi: child.hi, ...(to !== undefined ? { to } : {}) });
  return true;
}

/**
 * The runtime reads its control words on every CONTROL_CHECK_EVERY-th call of shouldMigrate / potentialSplit
 * (cheap for tiny work units); a block is long, so each check here makes the calls that reach one real read.
 */
function migrateNow(ctx: TaskContext<unknown, unknown>): boolean {
  for (let k = 0; k < CONTROL_CHECK_EVERY; k++) if (ctx.shouldMigrate()) return true;
  return false;
}

function splitNow(ctx: TaskContext<unknown, unknown>): boolean {
  let split = false;
  for (let k = 0; k < CONTROL_CHECK_EVERY; k++) split = ctx.potentialSplit() || split;
  return split;
}
