/**
 * How one block of an iterative job is run, the same on a worker thread and in the sequential
 * reference: the block's iterations in fixed chunks (never across a task's end), each task's part of
 * the block in its own tally starting from `result.initial()`, then the block's tally (its parts
 * combined in order). So a job's result depends only on its input, never on where blocks ran.
 */
import { IterationRandom } from './iteration-random.js';
import type { BlockTally, IterationContext, IterativeDefinition, IterativeInput } from './iterative-types.js';

/** One task's iterations within the job and the context its `iterate` calls see. */
interface Segment<P> {
  first: number;
  iterations: number;
  ctx: IterationContext<P>;
}

export class BlockRunner<T, P> {
  private readonly segments: Array<Segment<P>>;
  /** Whether blocks report their tasks' parts (a job of several tasks). */
  private readonly parts: boolean;
  readonly blocks: number;

  constructor(private readonly def: IterativeDefinition<T, P>, private readonly input: IterativeInput<P>) {
    const rng = new IterationRandom(input.seed);
    const tasks = input.tasks ?? [{ name: def.name, first: 0, iterations: input.iterations, params: input.params }];
    this.segments = tasks.map((t, index) => ({
      first: t.first, iterations: t.iterations,
      ctx: { params: t.params, task: { index, name: t.name }, random: (i: number) => rng.at(t.first + i) },
    }));
    this.parts = input.tasks !== undefined;
    this.blocks = Math.ceil(input.iterations / input.blockSize);
  }

  /**
   * Runs block `k`. After each chunk `afterChunk(n)` is told how many iterations it ran; if it answers
   * true the block is abandoned (a stop: the block runs again from its first iteration elsewhere) and
   * undefined is returned.
   */
  run(k: number, afterChunk?: (n: number) => boolean): BlockTally<T> | undefined {
    const { blockSize, chunkSize } = this.input;
    const first = k * blockSize;
    const end = Math.min(first + blockSize, this.input.iterations);
    const parts: Array<{ task: number; n: number; v: T }> = [];
    for (let task = 0; task < this.segments.length; task++) {
      const s = this.segments[task]!;
      const lo = Math.max(first, s.first);
      const hi = Math.min(end, s.first + s.iterations);
      if (lo >= hi) continue;
      let tally = this.def.result.initial();
      for (let i = lo; i < hi; i += chunkSize) {
        const n = Math.min(chunkSize, hi - i);
        const out = this.def.iterate(i - s.first, n, tally, s.ctx);
        if (out !== undefined) tally = out;
        if (afterChunk?.(n)) return undefined;
      }
      parts.push({ task, n: hi - lo, v: tally });
    }
    if (!this.parts) return { n: end - first, v: parts[0]!.v };
    let v = this.def.result.initial();
    for (const p of parts) v = this.def.result.combine(v, p.v);
    return { n: end - first, v, tasks: parts };
  }
}

/** The fold of two block tallies (earlier first): counts add, tallies and each task's part combine in order. */
export function combineBlocks<T>(combine: (acc: T, block: T) => T, a: BlockTally<T>, b: BlockTally<T>): BlockTally<T> {
  const out: BlockTally<T> = { n: a.n + b.n, v: combine(a.v, b.v) };
  if (!a.tasks && !b.tasks) return out;
  const tasks = [...(a.tasks ?? [])];
  for (const part of b.tasks ?? []) {
    const at = tasks.findIndex((x) => x.task === part.task);
    if (at < 0) tasks.push(part);
    else tasks[at] = { task: part.task, n: tasks[at]!.n + part.n, v: combine(tasks[at]!.v, part.v) };
  }
  tasks.sort((x, y) => x.task - y.task);
  return { ...out, tasks };
}
